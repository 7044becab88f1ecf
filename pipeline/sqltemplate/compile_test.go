package sqltemplate

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// testInputs are the inputs every compile test may use: plain inputs and
// two enums.
var testInputs = map[string]Param{
	"a":    {},
	"b":    {},
	"q":    {},
	"sort": {Enum: []string{"name", "created_at", "s.t", `we"ird`, "back`tick"}},
	"tbl":  {Enum: []string{"users", "audit.log"}},
}

var testEnv = map[string]string{
	"ORG":    "acme",
	"SCHEMA": "app",
	"EMPTY":  "",
	"QUOTE":  "'",
	"BRACE":  "{",
	"TPL":    "{{ inputs.a }}",
	"PARAM":  "$1",
	"QMARK":  "?",
	"MULTI":  "a\nb",
}

func lookupTestEnv(name string) (string, bool) {
	v, ok := testEnv[name]
	return v, ok
}

func compileTest(src string, d Dialect) (*Statement, error) {
	return Compile(src, Options{Dialect: d, Inputs: testInputs, LookupEnv: lookupTestEnv})
}

// checkTokens verifies the documented invariant Tokens() == Lex(Text()).
func checkTokens(t *testing.T, st *Statement) {
	t.Helper()
	toks, err := Lex(st.Text(), st.Dialect())
	if err != nil {
		t.Fatalf("Lex(Text()) of %q: %v", st.Text(), err)
	}
	if !reflect.DeepEqual(toks, st.Tokens()) {
		t.Errorf("Tokens() differ from Lex(Text())\n Tokens %v\n Lex    %v", st.Tokens(), toks)
	}
}

func TestCompile(t *testing.T) {
	tests := []struct {
		name   string
		d      Dialect
		src    string
		text   string
		params []string
		static bool
	}{
		{"pg numbering reuses $n", Postgres,
			"SELECT * FROM t WHERE a = {{ inputs.a }} AND b = {{inputs.b}} OR a = {{  inputs.a  }}",
			"SELECT * FROM t WHERE a = $1 AND b = $2 OR a = $1", []string{"a", "b"}, true},
		{"sqlite repeats ?", SQLite,
			"SELECT * FROM t WHERE a = {{ inputs.a }} AND b = {{inputs.b}} OR a = {{  inputs.a  }}",
			"SELECT * FROM t WHERE a = ? AND b = ? OR a = ?", []string{"a", "b"}, true},
		{"mysql repeats ?", MySQL,
			"SELECT * FROM t WHERE b = {{inputs.b}} AND a = {{ inputs.a }} OR b = {{inputs.b}}",
			"SELECT * FROM t WHERE b = ? AND a = ? OR b = ?", []string{"b", "a"}, true},
		{"the brief's example", Postgres,
			"SELECT id, name FROM users WHERE id = {{ inputs.a }} AND org = '{{ env.ORG }}' ORDER BY {{ inputs.sort }} LIMIT {{inputs.b}}",
			"SELECT id, name FROM users WHERE id = $1 AND org = 'acme' ORDER BY {{ inputs.sort }} LIMIT $2", []string{"a", "b"}, false},
		{"newlines inside braces", Postgres, "SELECT {{\n\tinputs.a\n}}",
			"SELECT $1", []string{"a"}, true},
		{"no inputs", SQLite, "SELECT 1", "SELECT 1", nil, true},

		{"env in code, string and comment", Postgres,
			"SELECT '{{ env.ORG }}', x FROM {{ env.SCHEMA }}.users -- for {{env.ORG}}",
			"SELECT 'acme', x FROM app.users -- for acme", nil, true},
		{"empty env value", SQLite, "SELECT 1{{ env.EMPTY }}", "SELECT 1", nil, true},
		{"env value with newline", Postgres, "SELECT 1 -- {{ env.MULTI }}", "SELECT 1 -- a\nb", nil, true},
		{"env in dollar quote", Postgres, "SELECT $$ {{ env.ORG }} $$, {{ inputs.a }}",
			"SELECT $$ acme $$, $1", []string{"a"}, true},

		{"concatenation instead of a string", Postgres, "SELECT * FROM t WHERE n LIKE '%' || {{ inputs.q }} || '%'",
			"SELECT * FROM t WHERE n LIKE '%' || $1 || '%'", []string{"q"}, true},
		{"pg cast", Postgres, "SELECT {{inputs.a}}::int, {{inputs.b}}::text[]",
			"SELECT $1::int, $2::text[]", []string{"a", "b"}, true},
		{"pg jsonb question marks are operators", Postgres,
			"SELECT d ? 'k', d ?| array['a'], d ?& array['b'] FROM t WHERE id = {{ inputs.a }}",
			"SELECT d ? 'k', d ?| array['a'], d ?& array['b'] FROM t WHERE id = $1", []string{"a"}, true},
		{"pg dollar quotes", Postgres, "SELECT $$it's$$, $t$ a $$ b $t$, {{ inputs.a }}",
			"SELECT $$it's$$, $t$ a $$ b $t$, $1", []string{"a"}, true},
		{"pg nested comment", Postgres, "SELECT /* a /* b */ c */ {{ inputs.a }}",
			"SELECT /* a /* b */ c */ $1", []string{"a"}, true},
		{"pg E string escapes", Postgres, `SELECT E'it\'s', {{ inputs.a }}`,
			`SELECT E'it\'s', $1`, []string{"a"}, true},
		{"pg unicode strings", Postgres, `SELECT U&'d\0061t', U&"c", {{inputs.a}}`,
			`SELECT U&'d\0061t', U&"c", $1`, []string{"a"}, true},
		{"pg $ in identifiers", Postgres, "SELECT a$b, {{inputs.a}}",
			"SELECT a$b, $1", []string{"a"}, true},
		{"sqlite nested comment is not nested", SQLite, "SELECT /* /* */ {{ inputs.a }}",
			"SELECT /* /* */ ?", []string{"a"}, true},
		{"sqlite bracket identifier", SQLite, "SELECT [a b], `c` FROM t WHERE x = {{ inputs.a }}",
			"SELECT [a b], `c` FROM t WHERE x = ?", []string{"a"}, true},
		{"mysql comments", MySQL, "SELECT {{inputs.a}} # {{ env.ORG }}\n-- {{ env.ORG }}\n, 1",
			"SELECT ? # acme\n-- acme\n, 1", []string{"a"}, true},
		{"mysql -- without space is minus minus", MySQL, "SELECT 1--{{inputs.a}}",
			"SELECT 1--?", []string{"a"}, true},
		{"mysql backslash escapes", MySQL, `SELECT 'it\'s', "a\"b", {{ inputs.a }}`,
			`SELECT 'it\'s', "a\"b", ?`, []string{"a"}, true},
		{"mysql user variable", MySQL, "SET @x = {{inputs.a}}", "SET @x = ?", []string{"a"}, true},

		{"space keeps substitutions apart", Postgres, "SELECT {{inputs.a}}{{inputs.b}}, 'x'{{inputs.a}}",
			"SELECT $1 $2, 'x' $1", []string{"a", "b"}, true},
		{"space keeps an identifier from merging", Postgres, `SELECT "x"{{ inputs.sort | ident }}, U&{{inputs.sort|ident}}`,
			`SELECT "x" {{ inputs.sort }}, U& {{ inputs.sort }}`, nil, false},
		{"no space next to operators", MySQL, "SELECT -{{inputs.a}}*({{inputs.b}})",
			"SELECT -?*(?)", []string{"a", "b"}, true},

		{"enum in value position is bound", Postgres, "SELECT * FROM t WHERE s = {{ inputs.sort }}",
			"SELECT * FROM t WHERE s = $1", []string{"sort"}, true},
		{"enum in both positions", SQLite, "SELECT * FROM t WHERE {{ inputs.sort | ident }} = {{ inputs.sort }}",
			"SELECT * FROM t WHERE {{ inputs.sort }} = ?", []string{"sort"}, false},
		{"identifier slots do not take numbers", Postgres,
			"SELECT * FROM {{ inputs.tbl }} WHERE a = {{ inputs.a }} ORDER BY {{ inputs.sort }} LIMIT {{ inputs.b }}",
			"SELECT * FROM {{ inputs.tbl }} WHERE a = $1 ORDER BY {{ inputs.sort }} LIMIT $2", []string{"a", "b"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.d.String()+"/"+tt.name, func(t *testing.T) {
			st, err := compileTest(tt.src, tt.d)
			if err != nil {
				t.Fatalf("Compile(%q): %v", tt.src, err)
			}
			if st.Text() != tt.text {
				t.Errorf("Text()\n got %q\nwant %q", st.Text(), tt.text)
			}
			if !reflect.DeepEqual(st.Params(), tt.params) {
				t.Errorf("Params() = %q, want %q", st.Params(), tt.params)
			}
			if st.Static() != tt.static {
				t.Errorf("Static() = %v, want %v", st.Static(), tt.static)
			}
			if st.Dialect() != tt.d {
				t.Errorf("Dialect() = %v, want %v", st.Dialect(), tt.d)
			}
			checkTokens(t, st)
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name      string
		d         Dialect
		src       string
		line, col int
		msg       string // the whole message, or its start when it ends in "…"
	}{
		// Template syntax.
		{"unclosed", Postgres, "SELECT {{ inputs.a", 1, 8, `unclosed "{{": missing "}}"`},
		{"unclosed before another", Postgres, "SELECT {{ inputs.a AND {{ inputs.b }}", 1, 8, `unclosed "{{": missing "}}"`},
		{"unclosed in a comment", Postgres, "SELECT 1 -- {{", 1, 13, `unclosed "{{": missing "}}"`},
		{"empty", Postgres, "SELECT {{ }}", 1, 8, `empty template {{ }}; write {{ inputs.NAME }}, {{ env.NAME }}, {{ auth.subject }} or {{ auth.claims.NAME }}…`},
		{"unknown template", Postgres, "SELECT {{ foo }}", 1, 8, `unknown template {{ foo }}; write {{ inputs.NAME }}, {{ env.NAME }}, {{ auth.subject }} or {{ auth.claims.NAME }}…`},
		{"unknown namespace", Postgres, "SELECT {{ input.a }}", 1, 8, `unknown namespace "input" in {{ input.a }}; write {{ inputs.NAME }}, {{ env.NAME }}, {{ auth.subject }} or {{ auth.claims.NAME }}…`},
		{"braces in a pg array literal", Postgres, "SELECT '{{1,2},{3,4}}'::int[]", 1, 9, `unknown template {{1,2},{3,4}}; write {{ inputs.NAME }}, {{ env.NAME }}, {{ auth.subject }} or {{ auth.claims.NAME }} (to put two braces in SQL text, separate them: "{ {")`},
		{"missing name", Postgres, "SELECT {{ inputs. }}", 1, 8, `missing name after "inputs." in {{ inputs. }}`},
		{"namespace only", Postgres, "SELECT {{env}}", 1, 8, `missing name after "env." in {{env}}`},
		{"bad name", Postgres, "SELECT {{ inputs.a-b }}", 1, 8, `invalid name "a-b" in {{ inputs.a-b }}: a name is letters, digits and _, not starting with a digit`},
		{"dotted name", Postgres, "SELECT {{ inputs.a.b }}", 1, 8, `invalid name "a.b" in {{ inputs.a.b }}…`},
		{"digit first", Postgres, "SELECT {{ env.1X }}", 1, 8, `invalid name "1X" in {{ env.1X }}…`},
		{"unknown filter", Postgres, "SELECT {{ inputs.a | upper }}", 1, 8, `unknown filter "upper" in {{ inputs.a | upper }}; the only filter is "ident" (an enum input in identifier position)`},
		{"missing filter", Postgres, "SELECT {{ inputs.a | }}", 1, 8, `missing filter name after "|" in {{ inputs.a | }}`},
		{"filter on env", Postgres, "SELECT {{ env.ORG | ident }}", 1, 8, `filter "ident" applies to inputs only, not to {{ env.ORG | ident }}`},
		{"extra word", Postgres, "SELECT {{ inputs.a b }}", 1, 8, `unexpected "b" after inputs.a in {{ inputs.a b }}…`},
		{"extra after filter", Postgres, "SELECT {{ inputs.a|ident x }}", 1, 8, `unexpected "x" after the filter in {{ inputs.a|ident x }}`},
		{"unknown input", Postgres, "SELECT 1\nWHERE x = {{ inputs.zzz }}", 2, 11, `unknown input "zzz" (declared: a, b, e, q, sort, tbl)`},

		// Env.
		{"env not set", Postgres, "SELECT '{{ env.NOPE }}'", 1, 9, `environment variable "NOPE" is not set`},
		{"env with template", Postgres, "SELECT {{ env.TPL }}", 1, 8, `environment variable "TPL" contains "{{": env values are substituted as text and may not contain templates`},
		{"env forms braces", Postgres, "SELECT 1,\n  {{ env.BRACE }}{ x }}", 2, 3, `an env value forms "{{" with the text next to it (in the value of environment variable "BRACE")`},
		{"env opens a string", Postgres, "SELECT a\nFROM t WHERE {{ env.QUOTE }}x", 2, 14, `unterminated string literal (in the value of environment variable "QUOTE")`},
		{"env brings a parameter", Postgres, "SELECT {{ env.PARAM }}", 1, 8, `literal parameter "$1" in the statement; write {{ inputs.NAME }} instead (a literal parameter would shift the numbering of the bound inputs) (in the value of environment variable "PARAM")`},
		{"env brings a ? marker", MySQL, "SELECT {{ env.QMARK }}", 1, 8, `literal parameter "?" in the statement…`},

		// Inputs where no parameter can be.
		{"pg string", Postgres, "SELECT * FROM t WHERE n LIKE '%{{ inputs.q }}%'", 1, 32, `input "q" inside a string literal; write '%' || {{ inputs.q }} || '%'`},
		{"mysql string", MySQL, "SELECT * FROM t WHERE n LIKE '%{{ inputs.q }}%'", 1, 32, `input "q" inside a string literal; write CONCAT('%', {{ inputs.q }}, '%')`},
		{"mysql escaped quote", MySQL, `SELECT 'it\'s {{ inputs.a }}'`, 1, 15, `input "a" inside a string literal…`},
		{"mysql double-quoted string", MySQL, `SELECT "a\" {{ inputs.a }}"`, 1, 13, `input "a" inside a string literal…`},
		{"pg E string", Postgres, `SELECT E'\' {{ inputs.a }}'`, 1, 13, `input "a" inside a string literal…`},
		{"pg standard string ends at the backslash quote", Postgres, `SELECT 'it\'s {{ inputs.a }}'`, 1, 29, `unterminated string literal`},
		{"pg quoted identifier", Postgres, `SELECT "{{ inputs.sort }}" FROM t`, 1, 9, `input "sort" inside a quoted identifier; an identifier can only come from an enum input written outside quotes: {{ inputs.sort }}`},
		{"sqlite bracket identifier", SQLite, `SELECT [{{ inputs.sort }}] FROM t`, 1, 9, `input "sort" inside a quoted identifier…`},
		{"mysql backtick identifier", MySQL, "SELECT `{{ inputs.sort }}` FROM t", 1, 9, `input "sort" inside a quoted identifier…`},
		{"pg dollar quote", Postgres, "DO $body$ BEGIN PERFORM {{ inputs.a }}; END $body$", 1, 25, `input "a" inside a dollar-quoted string; values are bound, never spliced into text: use {{ inputs.a }} outside the quotes`},
		{"line comment", Postgres, "SELECT 1 -- {{ inputs.a }}\n", 1, 13, `input "a" inside a comment; move it out of the comment or remove it`},
		{"block comment", SQLite, "SELECT /*\n {{ inputs.a }} */ 1", 2, 2, `input "a" inside a comment…`},
		{"pg nested comment", Postgres, "SELECT /* /* */ {{ inputs.a }} */ 1", 1, 17, `input "a" inside a comment…`},
		{"mysql hash comment", MySQL, "SELECT 1 # {{ inputs.a }}", 1, 12, `input "a" inside a comment…`},
		{"mysql versioned comment", MySQL, "SELECT /*! {{ inputs.a }} */ 1", 1, 12, `input "a" inside a comment…`},
		{"ident filter inside a string", Postgres, "SELECT '{{ inputs.sort | ident }}'", 1, 9, `input "sort" inside a string literal…`},

		// Literal parameters.
		{"pg $1", Postgres, "SELECT * FROM t WHERE a = $1", 1, 27, `literal parameter "$1" in the statement…`},
		{"sqlite ?", SQLite, "SELECT * FROM t\nWHERE a = ?", 2, 11, `literal parameter "?" in the statement…`},
		{"sqlite ?NNN", SQLite, "SELECT ?2", 1, 8, `literal parameter "?2" in the statement…`},
		{"sqlite :name", SQLite, "SELECT :name", 1, 8, `literal parameter ":name" in the statement…`},
		{"sqlite @name", SQLite, "SELECT @name", 1, 8, `literal parameter "@name" in the statement…`},
		{"sqlite $name", SQLite, "SELECT $name", 1, 8, `literal parameter "$name" in the statement…`},
		{"mysql ?", MySQL, "SELECT ?", 1, 8, `literal parameter "?" in the statement…`},

		// Unterminated text, reported where it starts.
		{"unterminated string", Postgres, "SELECT 1,\n 'abc", 2, 2, "unterminated string literal"},
		{"unterminated identifier", SQLite, `SELECT "abc`, 1, 8, "unterminated quoted identifier"},
		{"unterminated dollar quote", Postgres, "SELECT $x$abc", 1, 8, "unterminated dollar-quoted string $x$"},
		{"unterminated comment", MySQL, "SELECT /* abc", 1, 8, "unterminated /* comment"},
		{"unterminated nested comment", Postgres, "SELECT /* /* */", 1, 8, "unterminated /* comment"},
		{"column counts characters", SQLite, "SELECT 'é', 'ü', '{{ inputs.a }}'", 1, 19, `input "a" inside a string literal…`},

		// Empty statements.
		{"empty", Postgres, "", 1, 1, "empty statement"},
		{"blank", SQLite, " \n\t", 1, 1, "empty statement"},
		{"only comments", MySQL, "-- x\n/* y */ # z", 1, 1, "empty statement"},
		{"only semicolons", Postgres, ";;", 1, 1, "empty statement"},
		{"only an empty env value", Postgres, "{{ env.EMPTY }}", 1, 1, "empty statement"},

		// Inputs glued to words.
		{"glued before", Postgres, "SELECT * FROM t WHERE a = x{{ inputs.a }}", 1, 28, `input "a" is glued to the word before it; an input is a whole value or identifier, never part of one: put a space or an operator between them`},
		{"glued table suffix", MySQL, "SELECT * FROM logs_{{ inputs.tbl }}", 1, 20, `input "tbl" is glued to the word before it…`},
		{"glued after", SQLite, "SELECT {{ inputs.a }}1", 1, 8, `input "a" is glued to the word after it…`},
		{"glued after env", Postgres, "SELECT {{ env.ORG }}{{ inputs.a }}", 1, 21, `input "a" is glued to the word before it…`},

		// Identifier position with a non-enum input.
		{"order by", Postgres, "SELECT * FROM t ORDER BY {{ inputs.a }}", 1, 26, `input "a" is in identifier position (after ORDER BY) but is not an enum: a column or table name cannot be a bound parameter, so only an enum input, substituted from its allow-list, may stand there`},
		{"explicit ident", Postgres, "SELECT {{ inputs.a | ident }} FROM t", 1, 8, `input "a" is in identifier position (marked "| ident") but is not an enum…`},
		{"bad enum value for an identifier", Postgres, "SELECT * FROM t ORDER BY {{ inputs.e }}", 1, 26, `enum value "a..b" of input "e" cannot be written as an identifier (it is in identifier position, after ORDER BY): empty name part or NUL byte`},
	}
	inputs := map[string]Param{"e": {Enum: []string{"ok", "a..b"}}}
	for k, v := range testInputs {
		inputs[k] = v
	}
	for _, tt := range tests {
		t.Run(tt.d.String()+"/"+tt.name, func(t *testing.T) {
			st, err := Compile(tt.src, Options{Dialect: tt.d, Inputs: inputs, LookupEnv: lookupTestEnv})
			if err == nil {
				t.Fatalf("Compile(%q) = %q, want an error", tt.src, st.Text())
			}
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("Compile(%q): %T %v, want a *CompileError", tt.src, err, err)
			}
			want := tt.msg
			prefix := strings.HasSuffix(want, "…")
			want = strings.TrimSuffix(want, "…")
			if ce.Line != tt.line || ce.Column != tt.col ||
				prefix && !strings.HasPrefix(ce.Msg, want) || !prefix && ce.Msg != want {
				t.Errorf("Compile(%q)\n got %d:%d %s\nwant %d:%d %s", tt.src, ce.Line, ce.Column, ce.Msg, tt.line, tt.col, tt.msg)
			}
			if s := fmt.Sprintf("line %d, column %d: %s", ce.Line, ce.Column, ce.Msg); err.Error() != s {
				t.Errorf("Error() = %q, want %q", err.Error(), s)
			}
		})
	}
}

func TestCompileOptionErrors(t *testing.T) {
	_, err := Compile("SELECT 1", Options{})
	var ce *CompileError
	if !errors.As(err, &ce) || ce.Line != 0 || err.Error() != "unknown SQL dialect 0" {
		t.Errorf("no dialect: %v", err)
	}
	_, err = Compile("SELECT {{ inputs.a }}", Options{Dialect: SQLite})
	if err == nil || err.Error() != `line 1, column 8: unknown input "a": the tool declares no inputs` {
		t.Errorf("no inputs: %v", err)
	}
}

func TestCompileUsesOSEnv(t *testing.T) {
	t.Setenv("SQLTEMPLATE_TEST_ORG", "acme")
	st, err := Compile("SELECT '{{ env.SQLTEMPLATE_TEST_ORG }}'", Options{Dialect: Postgres})
	if err != nil || st.Text() != "SELECT 'acme'" {
		t.Fatalf("got %v, %v", st, err)
	}
	_, err = Compile("SELECT '{{ env.SQLTEMPLATE_TEST_UNSET }}'", Options{Dialect: Postgres})
	if err == nil || err.Error() != `line 1, column 9: environment variable "SQLTEMPLATE_TEST_UNSET" is not set` {
		t.Fatalf("got %v", err)
	}
}

// TestIdentPosition covers which places count as identifier position: with
// an enum input the placeholder becomes an identifier slot, with a plain
// input Compile refuses it naming the reason; elsewhere both are bound.
func TestIdentPosition(t *testing.T) {
	tests := []struct {
		d   Dialect
		src string // %s is the placeholder
		why string // "" for value position
	}{
		{Postgres, "SELECT * FROM t ORDER BY %s", "after ORDER BY"},
		{Postgres, "SELECT * FROM t order by a, %s DESC", "in the ORDER BY list"},
		{Postgres, "SELECT * FROM t ORDER BY a DESC NULLS LAST, %s", "in the ORDER BY list"},
		{Postgres, "SELECT 1 FROM t ORDER BY (SELECT 1 FROM u WHERE u.a = t.a), %s", "in the ORDER BY list"},
		{Postgres, "SELECT count(*) FROM t GROUP BY %s", "after GROUP BY"},
		{MySQL, "SELECT count(*) FROM t GROUP BY a, %s", "in the GROUP BY list"},
		{Postgres, "SELECT row_number() OVER (PARTITION BY %s) FROM t", "after PARTITION BY"},
		{Postgres, "SELECT row_number() OVER (PARTITION BY a, %s ORDER BY b) FROM t", "in the PARTITION BY list"},
		{Postgres, "SELECT rank() OVER (ORDER BY a, %s) FROM t", "in the ORDER BY list"},
		{Postgres, "SELECT * FROM %s", "after FROM"},
		{SQLite, "DELETE FROM %s WHERE a = 1", "after FROM"},
		{Postgres, "SELECT * FROM t JOIN %s ON true", "after JOIN"},
		{MySQL, "INSERT INTO %s (a) VALUES (1)", "after INTO"},
		{SQLite, "UPDATE %s SET a = 1", "after UPDATE"},
		{Postgres, "TRUNCATE TABLE %s", "after TABLE"},
		{Postgres, "SELECT t.%s FROM t", `after "."`},
		{Postgres, "SELECT %s.id FROM t", `before "."`},
		{Postgres, "SELECT 1 FROM t ORDER BY 1 + %s NULLS LAST", "before NULLS"},
		{Postgres, "SELECT 1 FROM t ORDER BY 1 + %s ASC", "before ASC"},
		{MySQL, "INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE %s = 2", "after UPDATE"},
		{Postgres, "UPDATE t SET %s = 1", "after SET"},
		{MySQL, "UPDATE t SET a = 1, %s = 2 WHERE b = 3", "in the SET list"},

		{Postgres, "SELECT %s", ""},
		{Postgres, "SELECT a, %s FROM t", ""},
		{Postgres, "SELECT * FROM t WHERE a = %s ORDER BY a", ""},
		{Postgres, "SELECT * FROM t ORDER BY a LIMIT %s", ""},
		{Postgres, "SELECT * FROM t ORDER BY a LIMIT 1 OFFSET %s", ""},
		{MySQL, "SELECT * FROM t ORDER BY a LIMIT %s, 10", ""},
		{MySQL, "SELECT * FROM t ORDER BY a LIMIT 10, %s", ""},
		{Postgres, "SELECT * FROM t ORDER BY coalesce(a, %s)", ""},
		{Postgres, "SELECT * FROM t ORDER BY array_position(ARRAY[1, %s], id)", ""},
		{Postgres, "SELECT * FROM t ORDER BY embedding <-> %s LIMIT 5", ""},
		{Postgres, "SELECT * FROM t ORDER BY CASE WHEN a = %s THEN 0 ELSE 1 END, b", ""},
		{Postgres, "SELECT * FROM t GROUP BY a HAVING count(*) > %s", ""},
		{Postgres, "SELECT * FROM t WHERE a IS NOT DISTINCT FROM %s", ""},
		{Postgres, "SELECT extract(year FROM %s)", ""},
		{MySQL, "SELECT substring(a FROM %s FOR 2) FROM t", ""},
		{Postgres, "SELECT trim(both 'x' FROM %s)", ""},
		{Postgres, "SELECT (SELECT x FROM u ORDER BY y LIMIT 1), %s FROM t", ""},
		{Postgres, "SELECT 1 FROM t ORDER BY a; SELECT 1, %s", ""},
		{Postgres, "SELECT * FROM t, %s", ""},
		{Postgres, `SELECT * FROM t WHERE "FROM" = 'ORDER BY' AND b = %s`, ""},
		{Postgres, "SELECT * FROM t WHERE a IN (%s, %s)", ""},
		{Postgres, "UPDATE t SET a = %s, b = %s WHERE c = %s", ""},
		{Postgres, "UPDATE t SET a = coalesce(b, %s), c = 1 FROM u WHERE u.x = t.x AND u.y IN (1, %s)", ""},
		{MySQL, "SELECT CAST(a AS CHAR CHARACTER SET utf8mb4), %s FROM t", ""},
		{MySQL, "SELECT CAST(a AS CHAR CHARACTER SET %s)", ""},
		{MySQL, "SELECT CONVERT(a USING utf8mb4) COLLATE utf8mb4_bin, %s", ""},
	}
	for _, tt := range tests {
		enumSrc := strings.ReplaceAll(tt.src, "%s", "{{ inputs.sort }}")
		st, err := compileTest(enumSrc, tt.d)
		if err != nil {
			t.Errorf("%s %q: %v", tt.d, enumSrc, err)
			continue
		}
		if ident := strings.Contains(st.Text(), "{{ inputs.sort }}"); ident != (tt.why != "") {
			t.Errorf("%s %q: Text() = %q, identifier slot %v, want %v", tt.d, enumSrc, st.Text(), ident, tt.why != "")
		}
		checkTokens(t, st)

		plainSrc := strings.ReplaceAll(tt.src, "%s", "{{ inputs.a }}")
		_, err = compileTest(plainSrc, tt.d)
		if tt.why == "" {
			if err != nil {
				t.Errorf("%s %q: %v", tt.d, plainSrc, err)
			}
			continue
		}
		want := fmt.Sprintf(`input "a" is in identifier position (%s) but is not an enum`, tt.why)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s %q: got %v, want %q", tt.d, plainSrc, err, want)
		}
	}
}
