package sqltemplate

import (
	"fmt"
	"strings"
)

// Render produces the SQL and the argument list for one call. values holds
// the already-validated inputs; a missing key gives a nil argument (SQL
// NULL). An identifier-position enum input must be a string in its
// allow-list, else an error; it is written as a quoted identifier for the
// dialect ("x" for Postgres, `x` for MySQL and SQLite; a dotted value a.b
// is quoted per part: "a"."b";
// embedded quote characters doubled).
//
// The values of bound inputs only ever reach args; the SQL text depends on
// nothing but the identifier slots, and those only take operator-written
// allow-list entries.
func (s *Statement) Render(values map[string]any) (sql string, args []any, err error) {
	return s.RenderAs(values, nil)
}

// RenderAs is Render for a call made by id: {{ auth.subject }} and
// {{ auth.claims.NAME }} bind id's values (never values'). A value id does
// not carry, without a "| default", is a *MissingIdentityError.
func (s *Statement) RenderAs(values map[string]any, id *Identity) (sql string, args []any, err error) {
	args = make([]any, len(s.args))
	for i, name := range s.args {
		if isAuth(name) {
			if args[i], err = s.authValue(name, id); err != nil {
				return "", nil, err
			}
			continue
		}
		args[i] = values[name]
	}
	if s.pieces == nil {
		return s.text, args, nil
	}
	var b strings.Builder
	b.Grow(len(s.text) + 16*len(s.pieces))
	for _, p := range s.pieces {
		if p.input == "" {
			b.WriteString(p.text)
			continue
		}
		q, err := s.ident(p.input, values)
		if err != nil {
			return "", nil, err
		}
		b.WriteString(q)
	}
	return b.String(), args, nil
}

// ident is the quoted identifier an identifier slot becomes for this call.
// The error does not repeat the value: it came from the caller, and the
// message ends up in logs and on the wire.
func (s *Statement) ident(input string, values map[string]any) (string, error) {
	is := s.idents[input]
	v, ok := values[input]
	if !ok || v == nil {
		return "", fmt.Errorf("input %q is required: it names a column or table, one of %s", input, is.allowed)
	}
	str, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("input %q must be a string naming a column or table, one of %s", input, is.allowed)
	}
	q, ok := is.quoted[str]
	if !ok {
		return "", fmt.Errorf("input %q must be one of %s", input, is.allowed)
	}
	return q, nil
}

// quoteIdent writes v as a quoted identifier for d, each dot-separated part
// quoted on its own (schema.table), the quote character doubled inside.
// SQLite gets backticks: it reads a double-quoted name that matches no
// column as a string literal, so a mistyped enum value would sort by a
// constant instead of failing.
func quoteIdent(d Dialect, v string) string {
	q := `"`
	if d == MySQL || d == SQLite {
		q = "`"
	}
	parts := strings.Split(v, ".")
	for i, p := range parts {
		parts[i] = q + strings.ReplaceAll(p, q, q+q) + q
	}
	return strings.Join(parts, ".")
}
