package sqltemplate

import (
	"encoding/json"
	"fmt"
	"strings"
)

// template is one {{ ... }} in the operator's text.
type template struct {
	start, end int // byte offsets of "{{" and just past "}}"
	env        bool
	name       string
	ident      bool // written with "| ident"
	// auth is the identity path of {{ auth.subject }} ("subject") or
	// {{ auth.claims.a.b }} ("claims.a.b"); name is then "auth."+auth.
	auth   string
	def    any  // the value of "| default VALUE"
	hasDef bool // "| default" was written
}

// scanTemplates finds every {{ ... }} in src, wherever it is (code, string,
// comment): env templates are substituted everywhere, and an input template
// outside code must be found to be refused. So "{{" is reserved in the
// whole statement, and anything that is not a template we understand is an
// error rather than text, which keeps typos such as {{ input.x }} from
// reaching the database.
func scanTemplates(src string) ([]template, *lexError) {
	var out []template
	for i := 0; ; {
		k := strings.Index(src[i:], "{{")
		if k < 0 {
			return out, nil
		}
		start := i + k
		k = strings.Index(src[start+2:], "}}")
		if k < 0 || strings.Contains(src[start+2:start+2+k], "{{") {
			return nil, &lexError{start, `unclosed "{{": missing "}}"`}
		}
		end := start + 2 + k + 2
		t, msg := parseTemplate(src[start+2 : end-2])
		if msg != "" {
			return nil, &lexError{start, msg}
		}
		t.start, t.end = start, end
		out = append(out, t)
		i = end
	}
}

const templateHelp = `write {{ inputs.NAME }}, {{ env.NAME }}, {{ auth.subject }} or {{ auth.claims.NAME }}` +
	` (to put two braces in SQL text, separate them: "{ {")`

// parseTemplate reads the inside of {{ }}: "ns.NAME" optionally followed by
// "| ident" (inputs) or "| default VALUE" (auth), with optional whitespace.
// msg says what is wrong, if anything.
func parseTemplate(inner string) (t template, msg string) {
	show := "{{" + inner + "}}"
	f := templateFields(inner)
	if len(f) == 0 {
		return t, "empty template " + show + "; " + templateHelp
	}
	path := f[0]
	ns, name, dotted := strings.Cut(path, ".")
	if ns == "auth" {
		return parseAuth(inner, show, name)
	}
	switch {
	case ns != "inputs" && ns != "env":
		if !dotted {
			return t, fmt.Sprintf("unknown template %s; %s", show, templateHelp)
		}
		return t, fmt.Sprintf("unknown namespace %q in %s; %s", ns, show, templateHelp)
	case name == "":
		return t, fmt.Sprintf("missing name after %q in %s", ns+".", show)
	case !validName(name):
		return t, fmt.Sprintf("invalid name %q in %s: a name is letters, digits and _, not starting with a digit", name, show)
	}
	t.env, t.name = ns == "env", name
	rest := f[1:]
	if len(rest) == 0 {
		return t, ""
	}
	if rest[0] != "|" {
		return t, fmt.Sprintf("unexpected %q after %s in %s; the only filter is %q, written {{ inputs.NAME | ident }}", rest[0], path, show, "ident")
	}
	switch {
	case len(rest) == 1:
		return t, fmt.Sprintf("missing filter name after \"|\" in %s", show)
	case rest[1] == "default":
		return t, fmt.Sprintf("filter %q applies to identity values ({{ auth.claims.NAME | default VALUE }}), not to %s", "default", show)
	case rest[1] != "ident":
		return t, fmt.Sprintf("unknown filter %q in %s; the only filter is %q (an enum input in identifier position)", rest[1], show, "ident")
	case t.env:
		return t, fmt.Sprintf("filter %q applies to inputs only, not to %s", "ident", show)
	case len(rest) > 2:
		return t, fmt.Sprintf("unexpected %q after the filter in %s", rest[2], show)
	}
	t.ident = true
	return t, ""
}

// parseAuth reads {{ auth.subject }} and {{ auth.claims.a.b }}, optionally
// followed by "| default VALUE" (README, Statement templates). name is what
// follows "auth.".
func parseAuth(inner, show, name string) (t template, msg string) {
	head, filter, piped := strings.Cut(inner, "|")
	f := strings.Fields(head)
	if len(f) != 1 {
		return t, fmt.Sprintf("unexpected %q after %s in %s; write {{ auth.claims.NAME | default VALUE }}", f[len(f)-1], f[0], show)
	}
	switch {
	case name == "subject":
	case strings.HasPrefix(name, "claims."):
		for _, part := range strings.Split(strings.TrimPrefix(name, "claims."), ".") {
			if !validName(part) {
				return t, fmt.Sprintf("invalid claim name %q in %s: a claim name is letters, digits and _, not starting with a digit, with dots between the names of nested claims", strings.TrimPrefix(name, "claims."), show)
			}
		}
	default:
		return t, fmt.Sprintf("unknown identity value %q in %s; write {{ auth.subject }} or {{ auth.claims.NAME }}", "auth."+name, show)
	}
	t.auth, t.name = name, "auth."+name
	if !piped {
		return t, ""
	}
	filter = strings.TrimSpace(filter)
	fname, lit, _ := strings.Cut(filter, " ")
	switch fname {
	case "default":
	case "ident":
		return t, fmt.Sprintf("an identity value cannot be an identifier (%s): identity values are always bound as parameters, never written into the SQL text", show)
	case "":
		return t, fmt.Sprintf("missing filter name after \"|\" in %s", show)
	default:
		return t, fmt.Sprintf("unknown filter %q in %s; an identity value takes only %q, written {{ auth.claims.NAME | default VALUE }}", fname, show, "default")
	}
	v, err := parseDefault(strings.TrimSpace(lit))
	if err != "" {
		return t, fmt.Sprintf("%s in %s", err, show)
	}
	t.def, t.hasDef = v, true
	return t, ""
}

// parseDefault reads the VALUE of "| default VALUE": a JSON string, number,
// true, false or null, or a single-quoted string (” for a quote).
func parseDefault(lit string) (any, string) {
	if lit == "" {
		return nil, `missing value after "default"`
	}
	if len(lit) >= 2 && lit[0] == '\'' && lit[len(lit)-1] == '\'' {
		body := lit[1 : len(lit)-1]
		if strings.Contains(strings.ReplaceAll(body, "''", ""), "'") {
			return nil, fmt.Sprintf("bad default value %s: write a quote inside '...' as ''", lit)
		}
		return strings.ReplaceAll(body, "''", "'"), ""
	}
	d := json.NewDecoder(strings.NewReader(lit))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return nil, fmt.Sprintf("bad default value %s: write a quoted string ('x' or \"x\"), a number, true, false or null", lit)
	}
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, ""
		}
		f, _ := x.Float64()
		return f, ""
	case nil, string, bool:
		return x, ""
	}
	return nil, fmt.Sprintf("bad default value %s: write a quoted string ('x' or \"x\"), a number, true, false or null", lit)
}

// templateFields splits the inside of a template at whitespace and around
// "|", so "inputs.x|ident" and "inputs.x | ident" read the same.
func templateFields(s string) []string {
	return strings.Fields(strings.ReplaceAll(s, "|", " | "))
}

// validName accepts the names a template may use: [A-Za-z_][A-Za-z0-9_]*.
func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || 'a' <= c|0x20 && c|0x20 <= 'z' || i > 0 && isDigit(c)) {
			return false
		}
	}
	return s != ""
}
