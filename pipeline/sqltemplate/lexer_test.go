package sqltemplate

import (
	"errors"
	"strings"
	"testing"
)

// dump writes tokens as "Kind:Text" separated by spaces, a compact form to
// compare against.
func dump(toks []Token) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t.Kind.String() + ":" + t.Text)
	}
	return b.String()
}

func TestLex(t *testing.T) {
	tests := []struct {
		name string
		d    Dialect
		src  string
		want string
	}{
		{"pg words and punct", Postgres, "SELECT a, b.c FROM t;",
			"Keyword:SELECT Identifier:a Punct:, Identifier:b Punct:. Identifier:c Keyword:FROM Identifier:t Punct:;"},
		{"pg casts and operators", Postgres, "a::int >= 1 <> b || c ->> 'k'",
			"Identifier:a Operator::: Identifier:int Operator:>= Number:1 Operator:<> Identifier:b Operator:|| Identifier:c Operator:->> String:'k'"},
		{"pg strings", Postgres, `'it''s' E'a\'b' e'\\' U&'d\0061' u&"x" N'n' B'01' X'ff'`,
			`String:'it''s' String:E'a\'b' String:e'\\' String:U&'d\0061' QuotedIdentifier:u&"x" String:N'n' String:B'01' String:X'ff'`},
		{"pg standard string keeps backslash", Postgres, `'a\' b`,
			`String:'a\' Identifier:b`},
		{"pg quoted identifier", Postgres, `"a""b" "FROM"`,
			`QuotedIdentifier:"a""b" QuotedIdentifier:"FROM"`},
		{"pg dollar quotes", Postgres, "$$a'b$$ $t$x $$ y$t$ $a_1$z$a_1$",
			"String:$$a'b$$ String:$t$x $$ y$t$ String:$a_1$z$a_1$"},
		{"pg dollar inside word", Postgres, "a$b$ c$1",
			"Identifier:a$b$ Identifier:c$1"},
		{"pg parameter", Postgres, "$1 $23",
			"BindParam:$1 BindParam:$23"},
		{"pg lone dollar", Postgres, "$ x",
			"Operator:$ Identifier:x"},
		{"pg jsonb question marks", Postgres, "d ? 'k' d ?| a d ?& b",
			"Identifier:d Operator:? String:'k' Identifier:d Operator:?| Identifier:a Identifier:d Operator:?& Identifier:b"},
		{"pg comments", Postgres, "1 -- x 'y\n2 /* a /* b */ c */ 3",
			"Number:1 Number:2 Number:3"},
		{"pg comment ends at CR", Postgres, "1 --c\r2",
			"Number:1 Number:2"},
		{"pg numbers", Postgres, "1 1.5 .5 1e3 1.5E-3 0x1F 12abc",
			"Number:1 Number:1.5 Number:.5 Number:1e3 Number:1.5E-3 Number:0x1F Number:12abc"},
		{"pg placeholder", Postgres, "a = {{ inputs.x }} AND {{inputs.y|ident}}",
			"Identifier:a Operator:= Placeholder:{{ inputs.x }} Keyword:AND Placeholder:{{inputs.y|ident}}"},
		{"pg braces in strings are text", Postgres, "'{{ inputs.x' -- {{\n1",
			"String:'{{ inputs.x' Number:1"},
		{"pg utf-8 identifier", Postgres, "SELECT café FROM t",
			"Keyword:SELECT Identifier:café Keyword:FROM Identifier:t"},
		{"pg brackets are punct", Postgres, "a[1]",
			"Identifier:a Punct:[ Number:1 Punct:]"},

		{"mysql backslash escapes", MySQL, `'it\'s' "a\"b" 'x''y' "p""q" '\\'`,
			`String:'it\'s' String:"a\"b" String:'x''y' String:"p""q" String:'\\'`},
		{"mysql backticks", MySQL, "`a``b` `FROM`",
			"QuotedIdentifier:`a``b` QuotedIdentifier:`FROM`"},
		{"mysql hash comment", MySQL, "1 # c 'x\n2",
			"Number:1 Number:2"},
		{"mysql dash comment needs space", MySQL, "1 -- c\n2--3\n4 --\t5\n6 --",
			"Number:1 Number:2 Operator:- Operator:- Number:3 Number:4 Number:6"},
		{"mysql dash comment ends at LF only", MySQL, "1 -- c\r2\n3",
			"Number:1 Number:3"},
		{"mysql versioned and hint comments", MySQL, "SELECT /*! STRAIGHT_JOIN */ /*+ BKA(t) */ 1",
			"Keyword:SELECT Number:1"},
		{"mysql block comments do not nest", MySQL, "/* /* */ 1 */",
			"Number:1 Operator:* Operator:/"},
		{"mysql parameter and variables", MySQL, "? @v @@session.x @ :=",
			"BindParam:? Identifier:@v Identifier:@@session Punct:. Identifier:x Operator:@ Operator::="},
		{"mysql dollar identifier", MySQL, "$a",
			"Identifier:$a"},

		{"sqlite quoting", SQLite, "[a b] `c` \"d\" 'e''f' x'00'",
			"QuotedIdentifier:[a b] QuotedIdentifier:`c` QuotedIdentifier:\"d\" String:'e''f' String:x'00'"},
		{"sqlite parameters", SQLite, "? ?3 :n @n $n #n",
			"BindParam:? BindParam:?3 BindParam::n BindParam:@n BindParam:$n BindParam:#n"},
		{"sqlite backslash is text", SQLite, `'a\' b`,
			`String:'a\' Identifier:b`},
		{"sqlite block comments do not nest", SQLite, "/* /* */ 1",
			"Number:1"},
	}
	for _, tt := range tests {
		t.Run(tt.d.String()+"/"+tt.name, func(t *testing.T) {
			toks, err := Lex(tt.src, tt.d)
			if err != nil {
				t.Fatalf("Lex(%q): %v", tt.src, err)
			}
			if got := dump(toks); got != tt.want {
				t.Errorf("Lex(%q)\n got %s\nwant %s", tt.src, got, tt.want)
			}
			for _, tok := range toks {
				if tt.src[tok.Offset:tok.Offset+len(tok.Text)] != tok.Text {
					t.Errorf("token %v: offset does not point at its text", tok)
				}
			}
		})
	}
}

func TestLexErrors(t *testing.T) {
	tests := []struct {
		d         Dialect
		src       string
		line, col int
		msg       string
	}{
		{Postgres, "SELECT 'abc", 1, 8, "unterminated string literal"},
		{Postgres, "SELECT\n  E'a\\'", 2, 3, "unterminated string literal"},
		{Postgres, `SELECT "abc`, 1, 8, "unterminated quoted identifier"},
		{Postgres, "SELECT $$abc$", 1, 8, "unterminated dollar-quoted string $$"},
		{Postgres, "SELECT $f$abc$g$", 1, 8, "unterminated dollar-quoted string $f$"},
		{Postgres, "SELECT /* a /* b */ c", 1, 8, "unterminated /* comment"},
		{Postgres, "SELECT {{ inputs.x", 1, 8, `unclosed "{{": missing "}}"`},
		{MySQL, `SELECT 'it\'s`, 1, 8, "unterminated string literal"},
		{MySQL, `SELECT "a\"`, 1, 8, "unterminated string literal"},
		{MySQL, "SELECT `a", 1, 8, "unterminated quoted identifier"},
		{SQLite, "SELECT [a", 1, 8, "unterminated [quoted identifier]"},
		{SQLite, "SELECT /* x", 1, 8, "unterminated /* comment"},
		{SQLite, "SELECT 'é', 'x", 1, 13, "unterminated string literal"},
	}
	for _, tt := range tests {
		_, err := Lex(tt.src, tt.d)
		var ce *CompileError
		if !errors.As(err, &ce) {
			t.Errorf("%s Lex(%q) = %v, want a *CompileError", tt.d, tt.src, err)
			continue
		}
		if ce.Line != tt.line || ce.Column != tt.col || ce.Msg != tt.msg {
			t.Errorf("%s Lex(%q) = %d:%d %q, want %d:%d %q", tt.d, tt.src, ce.Line, ce.Column, ce.Msg, tt.line, tt.col, tt.msg)
		}
	}
}

func TestTokenIsWord(t *testing.T) {
	toks, err := Lex(`delete "delete" DeLeTe pg_sleep`, Postgres)
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{true, false, true, false}
	for i, tok := range toks {
		if got := tok.IsWord("DELETE"); got != want[i] {
			t.Errorf("%v.IsWord(DELETE) = %v, want %v", tok, got, want[i])
		}
	}
}
