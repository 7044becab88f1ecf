package sqltemplate

import (
	"errors"
	"strings"
	"testing"
)

// The fuzz targets check the properties the package promises for any text an
// operator could write:
//   - Compile never panics, and refuses only with a *CompileError inside src;
//   - a compiled statement's Tokens are Lex(Text()), and Text holds no
//     template but the identifier slots;
//   - the rendered SQL does not depend on the values of bound inputs (they
//     reach args only), and re-lexes to the template's token shape, each
//     identifier slot becoming quoted identifiers.
//
// Run: go test -run='^$' -fuzz=FuzzCompile -fuzztime=60s ./pipeline/sqltemplate/

var fuzzEnum = []string{"x", "s.t", "q\"b`"}

var fuzzInputs = map[string]Param{"a": {}, "b": {}, "e": {Enum: fuzzEnum}}

func fuzzEnv(name string) (string, bool) {
	switch name {
	case "E1":
		return "acme", true
	case "E2":
		return "'", true
	case "E3":
		return "{", true
	case "E4":
		return "", true
	}
	return "", false
}

func fuzzCompile(src string, d uint8) (*Statement, Dialect, error) {
	dl := Dialect(d%3 + 1)
	st, err := Compile(src, Options{Dialect: dl, Inputs: fuzzInputs, LookupEnv: fuzzEnv})
	return st, dl, err
}

var fuzzSeeds = []string{
	"SELECT id, name FROM users WHERE id = {{ inputs.a }} AND org = '{{ env.E1 }}' ORDER BY {{ inputs.e }} LIMIT {{inputs.b}}",
	"SELECT * FROM t WHERE a = {{ inputs.a }} OR a = {{inputs.a}} AND b = {{ inputs.b }}",
	"SELECT '%' || {{ inputs.a }} || '%', {{inputs.a}}::int, d ?| array['x']",
	"SELECT * FROM {{ inputs.e }} JOIN u ON true WHERE {{ inputs.e | ident }} = {{ inputs.e }}",
	"SELECT * FROM t ORDER BY a, {{ inputs.e }} DESC, {{inputs.e}}.x LIMIT {{ inputs.a }}, {{ inputs.b }}",
	"SELECT $$ {{ env.E1 }} $$, $t$ ' $t$, E'\\'', U&\"x\", {{ inputs.a }} /* a /* b */ c */",
	"SELECT 'it\\'s', \"a\\\"b\", `c``d`, @v, {{ inputs.a }} # {{ env.E1 }}\n-- x\n, 1--{{inputs.b}}",
	"SELECT [a b], x'00', {{ inputs.a }} -- {{ env.E4 }}\n; SELECT {{ inputs.b }};",
	"SELECT \"x\"{{ inputs.e | ident }}, U&{{inputs.e|ident}}, 'y'{{inputs.a}}{{inputs.b}}",
	"SELECT {{ env.E2 }}{{ inputs.a }}'",
	"SELECT {{ env.E3 }}{ }}",
	"SELECT * FROM t WHERE a IS DISTINCT FROM {{ inputs.a }} AND extract(year FROM {{ inputs.b }}) = 1",
	"SELECT row_number() OVER (PARTITION BY {{ inputs.e }}, a ORDER BY b, {{ inputs.e }}) FROM t GROUP BY a, {{ inputs.e }}",
	"SELECT '{{ inputs.a }}'",
	"SELECT $1, ?, :x",
	"SELECT {{ inputs.zz }} {{ env.NOPE }} {{ foo }} {{ inputs.a | up }}",
	"SELECT 'unterminated",
	"",
	"SELECT * FROM t WHERE tenant = {{ auth.claims.tenant }} AND o = {{auth.subject}} AND r = {{ auth.claims.org.r | default 'eu' }} ORDER BY {{ inputs.e }}",
	"SELECT {{ auth.claims.x | ident }}, '{{ auth.subject }}', {{ auth.claims.a | default \"|}\" }}",
	"SELECT * FROM {{ auth.claims.t }} WHERE a = {{ inputs.a }} -- {{ auth.subject }}",
}

// fuzzIdentity carries every identity value st binds, each with value v
// (a claim path that is also another's prefix stays missing).
func fuzzIdentity(st *Statement, v any) *Identity {
	id := &Identity{Subject: "subject", Claims: map[string]any{}}
	for _, name := range st.IdentityValues() {
		path, ok := strings.CutPrefix(name, "auth.claims.")
		if !ok {
			continue
		}
		m := id.Claims
		parts := strings.Split(path, ".")
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		if _, taken := m[parts[len(parts)-1]].(map[string]any); !taken {
			m[parts[len(parts)-1]] = v
		}
	}
	return id
}

// fuzzRender is RenderAs with fuzzIdentity; a value the identity cannot
// carry (see fuzzIdentity) is no failure.
func fuzzRender(t *testing.T, st *Statement, vals map[string]any, v any) (string, []any, *Identity, bool) {
	id := fuzzIdentity(st, v)
	sql, args, err := st.RenderAs(vals, id)
	var miss *MissingIdentityError
	if errors.As(err, &miss) {
		return "", nil, nil, false
	}
	if err != nil {
		t.Fatalf("Render(%q): %v", st.Text(), err)
	}
	return sql, args, id, true
}

func FuzzCompile(f *testing.F) {
	for i, s := range fuzzSeeds {
		for d := range uint8(3) {
			f.Add(s, uint8(i)+d)
		}
	}
	f.Fuzz(func(t *testing.T, src string, d uint8) {
		st, dl, err := fuzzCompile(src, d)
		if err != nil {
			var ce *CompileError
			if !errors.As(err, &ce) || ce.Line < 1 || ce.Column < 1 || ce.Line > strings.Count(src, "\n")+1 {
				t.Fatalf("Compile(%q): %T %v: want a *CompileError inside src", src, err, err)
			}
			return
		}
		checkTokens(t, st)
		toks := st.Tokens()
		if n, slots := strings.Count(st.Text(), "{{"), countKind(toks, Placeholder); n != slots {
			t.Fatalf("%s Text %q has %d \"{{\" for %d identifier slots", dl, st.Text(), n, slots)
		}
		_, args, _, ok := fuzzRender(t, st, map[string]any{"e": "x"}, "v")
		if !ok {
			return
		}
		if len(args) != countKind(toks, BindParam) && dl != Postgres || len(args) != len(st.Params()) && dl == Postgres {
			t.Fatalf("%s %q: %d args for %d markers, params %v", dl, st.Text(), len(args), countKind(toks, BindParam), st.Params())
		}
	})
}

func FuzzRender(f *testing.F) {
	values := []string{"", "x", "'; DROP TABLE t; --", "$1", "?", "{{ inputs.a }}", "\"", "`", "s.t", "\x00\n"}
	for i, s := range fuzzSeeds {
		for d := range uint8(3) {
			f.Add(s, uint8(i)+d, values[i%len(values)], values[(i+int(d))%len(values)])
		}
	}
	f.Fuzz(func(t *testing.T, src string, d uint8, v1, v2 string) {
		st, dl, err := fuzzCompile(src, d)
		if err != nil {
			return
		}
		ev := fuzzEnum[len(v1)%len(fuzzEnum)]
		vals := map[string]any{"a": v1, "b": v2, "e": ev}
		sql, args, id, ok := fuzzRender(t, st, vals, v2)
		if !ok {
			return
		}
		for i, name := range st.args {
			want, found := vals[name], true
			if isAuth(name) {
				if want, found = id.Lookup(name); !found {
					want = st.auth[name].def
				}
			}
			if args[i] != want {
				t.Fatalf("arg %d = %q, want %s = %q", i, args[i], name, want)
			}
		}

		// The SQL text must not depend on bound values, the identity's
		// included.
		other := map[string]any{"a": "\x00other-a", "b": 42, "e": ev}
		sql2, args2, _, ok := fuzzRender(t, st, other, "'; DROP TABLE t; --")
		if !ok || sql2 != sql || len(args2) != len(args) {
			t.Fatalf("SQL depends on bound values:\n %q\n %q", sql, sql2)
		}
		if st.Static() && sql != st.Text() {
			t.Fatalf("static statement renders %q, Text is %q", sql, st.Text())
		}

		// Same shape as the template: every token kept, every identifier
		// slot a quoted identifier (per part of a dotted value).
		got, err := Lex(sql, dl)
		if err != nil {
			t.Fatalf("%s rendered SQL %q does not lex: %v", dl, sql, err)
		}
		var want []string
		for _, tok := range st.Tokens() {
			if tok.Kind != Placeholder {
				want = append(want, tok.Kind.String()+":"+tok.Text)
				continue
			}
			name := strings.TrimSuffix(strings.TrimPrefix(tok.Text, "{{ inputs."), " }}")
			for k, part := range strings.Split(vals[name].(string), ".") {
				if k > 0 {
					want = append(want, "Punct:.")
				}
				want = append(want, "QuotedIdentifier:"+quoteIdent(dl, part))
			}
		}
		if g, w := dump(got), strings.Join(want, " "); g != w {
			t.Fatalf("%s rendered %q\n got %s\nwant %s", dl, sql, g, w)
		}
	})
}

func countKind(toks []Token, k TokenKind) int {
	n := 0
	for _, t := range toks {
		if t.Kind == k {
			n++
		}
	}
	return n
}

// TestFuzzSeedsCompile: `go test` runs both targets on their seeds; this
// makes sure enough seeds compile for the Render checks to run on them.
func TestFuzzSeedsCompile(t *testing.T) {
	compiled := 0
	for i, s := range fuzzSeeds {
		for d := range uint8(3) {
			if _, _, err := fuzzCompile(s, uint8(i)+d); err == nil {
				compiled++
			}
		}
	}
	// Guard against seeds that all fail to compile (the targets would then
	// check nothing past Compile).
	if compiled < 20 {
		t.Errorf("only %d of %d seed compilations succeed", compiled, 3*len(fuzzSeeds))
	}
}
