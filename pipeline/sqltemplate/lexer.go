package sqltemplate

import "strings"

// The lexer only has to find token boundaries the way the database server
// does: where strings, quoted identifiers, dollar quotes and comments begin
// and end, and which characters are parameter markers. It does not parse SQL.
// Getting a boundary wrong could put a placeholder in what the server reads
// as a comment or string; the values would still be bound (never spliced),
// but the parameter count would not match. So every rule below follows the
// server's own lexer for the dialect, not a generic SQL grammar.

// Lex splits src into significant tokens for dialect d, skipping whitespace
// and comments. A template {{ ... }} in SQL code is one Placeholder token;
// inside strings and comments braces are just text. The error is a
// *CompileError at the start of an unterminated string, quoted identifier,
// dollar quote, comment or template.
func Lex(src string, d Dialect) ([]Token, error) {
	toks, _, err := lex(src, d)
	if err != nil {
		return nil, err.at(src, nil)
	}
	return toks, nil
}

// spanKind says what kind of non-code text a span is; Compile uses it to
// refuse an input placeholder found inside one, with a message per kind.
type spanKind uint8

const (
	inString spanKind = iota + 1
	inQuotedIdent
	inDollarQuote
	inComment
)

// span is a stretch of text that is not SQL code: a string, quoted
// identifier, dollar quote or comment, [start, end) in bytes.
type span struct {
	start, end int
	kind       spanKind
}

// lexError is an error at a byte offset of the lexed text. Compile maps the
// offset back to the operator's text (env values may have moved it).
type lexError struct {
	off int
	msg string
}

type scanner struct {
	src   string
	d     Dialect
	toks  []Token
	spans []span
}

func lex(src string, d Dialect) ([]Token, []span, *lexError) {
	s := &scanner{src: src, d: d}
	if err := s.run(); err != nil {
		return nil, nil, err
	}
	return s.toks, s.spans, nil
}

func (s *scanner) emit(k TokenKind, start, end int) {
	s.toks = append(s.toks, Token{Kind: k, Text: s.src[start:end], Offset: start})
}

func (s *scanner) at(i int) byte {
	if i < len(s.src) {
		return s.src[i]
	}
	return 0
}

func (s *scanner) run() *lexError {
	src, d := s.src, s.d
	i := 0
	for i < len(src) {
		c, n := src[i], s.at(i+1)
		var err *lexError
		switch {
		case isSpace(c):
			i++
		case c == '-' && n == '-' && (d != MySQL || mysqlDashComment(s.at(i+2))):
			i = s.lineComment(i)
		case c == '#' && d == MySQL:
			i = s.lineComment(i)
		case c == '/' && n == '*':
			i, err = s.blockComment(i)
		case c == '{' && n == '{':
			i, err = s.placeholder(i)
		case c == '\'':
			i, err = s.quoted(i, i, '\'', d == MySQL, String, inString, "string literal")
		case c == '"' && d == MySQL:
			// MySQL reads "..." as a string unless sql_mode has ANSI_QUOTES.
			i, err = s.quoted(i, i, '"', true, String, inString, "string literal")
		case c == '"':
			i, err = s.quoted(i, i, '"', false, QuotedIdentifier, inQuotedIdent, "quoted identifier")
		case c == '`' && d != Postgres:
			i, err = s.quoted(i, i, '`', false, QuotedIdentifier, inQuotedIdent, "quoted identifier")
		case c == '[' && d == SQLite:
			i, err = s.bracketIdent(i)
		case c == '$' && d == Postgres:
			i, err = s.dollar(i)
		case isDigit(c) || (c == '.' && isDigit(n)):
			i = s.number(i)
		case isWordStart(c) || (c == '$' && d == MySQL):
			i, err = s.word(i)
		default:
			i = s.other(i)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// lineComment skips a -- or # comment. Postgres ends it at \n or \r, MySQL
// and SQLite only at \n.
func (s *scanner) lineComment(i int) int {
	j := i
	for j < len(s.src) && s.src[j] != '\n' && (s.d != Postgres || s.src[j] != '\r') {
		j++
	}
	s.spans = append(s.spans, span{i, j, inComment})
	return j
}

// mysqlDashComment: MySQL only starts a -- comment when the second dash is
// followed by whitespace or a control character, or ends the input (at()
// gives 0 there); "a--1" is a minus minus one.
func mysqlDashComment(c byte) bool {
	return c <= ' ' || c == 0x7f
}

// blockComment skips /* ... */. Postgres nests them; SQLite and MySQL do not
// (MySQL's /*! ... */ and /*+ ... */ are lexed as comments too).
func (s *scanner) blockComment(i int) (int, *lexError) {
	depth := 1
	for j := i + 2; j < len(s.src); {
		switch {
		case s.src[j] == '*' && s.at(j+1) == '/':
			depth--
			j += 2
			if depth == 0 {
				s.spans = append(s.spans, span{i, j, inComment})
				return j, nil
			}
		case s.d == Postgres && s.src[j] == '/' && s.at(j+1) == '*':
			depth++
			j += 2
		default:
			j++
		}
	}
	return 0, &lexError{i, "unterminated /* comment"}
}

// placeholder lexes a template written in SQL code up to the first "}}".
// Its content is checked by the template parser, not here.
func (s *scanner) placeholder(i int) (int, *lexError) {
	k := strings.Index(s.src[i+2:], "}}")
	if k < 0 {
		return 0, &lexError{i, `unclosed "{{": missing "}}"`}
	}
	end := i + 2 + k + 2
	s.emit(Placeholder, i, end)
	return end, nil
}

// quoted lexes a quoted token whose opening quote is at q (start may be
// earlier, at a prefix such as E or U&). A doubled quote stands for itself;
// with backslash set, a backslash escapes the next byte (MySQL strings,
// Postgres E'...').
func (s *scanner) quoted(start, q int, quote byte, backslash bool, k TokenKind, sk spanKind, what string) (int, *lexError) {
	for j := q + 1; j < len(s.src); {
		switch c := s.src[j]; {
		case backslash && c == '\\':
			j += 2
		case c == quote && s.at(j+1) == quote:
			j += 2
		case c == quote:
			s.emit(k, start, j+1)
			s.spans = append(s.spans, span{start, j + 1, sk})
			return j + 1, nil
		default:
			j++
		}
	}
	return 0, &lexError{start, "unterminated " + what}
}

// bracketIdent lexes SQLite's [identifier] (no escapes: it ends at the first ]).
func (s *scanner) bracketIdent(i int) (int, *lexError) {
	k := strings.IndexByte(s.src[i+1:], ']')
	if k < 0 {
		return 0, &lexError{i, "unterminated [quoted identifier]"}
	}
	end := i + 1 + k + 1
	s.emit(QuotedIdentifier, i, end)
	s.spans = append(s.spans, span{i, end, inQuotedIdent})
	return end, nil
}

// dollar lexes what a $ starts in Postgres: a parameter $1, a dollar quote
// $$...$$ or $tag$...$tag$, or else a lone $ (an operator character).
// A $ inside a word (a$b) never gets here: words consume it.
func (s *scanner) dollar(i int) (int, *lexError) {
	j := i + 1
	if isDigit(s.at(j)) {
		for isDigit(s.at(j)) {
			j++
		}
		s.emit(BindParam, i, j)
		return j, nil
	}
	if isWordStart(s.at(j)) {
		for isWordStart(s.at(j)) || isDigit(s.at(j)) {
			j++
		}
	}
	if s.at(j) != '$' {
		s.emit(Operator, i, i+1)
		return i + 1, nil
	}
	delim := s.src[i : j+1]
	k := strings.Index(s.src[j+1:], delim)
	if k < 0 {
		return 0, &lexError{i, "unterminated dollar-quoted string " + delim}
	}
	end := j + 1 + k + len(delim)
	s.emit(String, i, end)
	s.spans = append(s.spans, span{i, end, inDollarQuote})
	return end, nil
}

// number lexes a numeric literal. Word characters glued to it (Postgres
// "trailing junk", MySQL identifiers such as 1st, 0x1F) stay in the token so
// that the next token starts where the server's does.
func (s *scanner) number(i int) int {
	j := i
	for isDigit(s.at(j)) {
		j++
	}
	if s.at(j) == '.' {
		j++
		for isDigit(s.at(j)) {
			j++
		}
	}
	if c := s.at(j); (c == 'e' || c == 'E') && (isDigit(s.at(j+1)) || (s.at(j+1) == '+' || s.at(j+1) == '-') && isDigit(s.at(j+2))) {
		j += 2
		for isDigit(s.at(j)) {
			j++
		}
	}
	if isWordStart(s.at(j)) {
		j = s.wordEnd(j)
	}
	s.emit(Number, i, j)
	return j
}

func (s *scanner) wordEnd(j int) int {
	for j < len(s.src) && isWordChar(s.src[j]) {
		j++
	}
	return j
}

// word lexes an unquoted word, or a string or identifier with a one-letter
// prefix: E'...' (Postgres, backslash escapes), U&'...' and U&"..."
// (Postgres), N'...', B'...', X'...'.
func (s *scanner) word(i int) (int, *lexError) {
	j := s.wordEnd(i + 1)
	if j == i+1 {
		switch c := s.src[i] | 0x20; {
		case s.at(j) == '\'' && c == 'e' && s.d == Postgres:
			return s.quoted(i, j, '\'', true, String, inString, "string literal")
		case s.at(j) == '\'' && (c == 'n' || c == 'b' || c == 'x'):
			return s.quoted(i, j, '\'', s.d == MySQL, String, inString, "string literal")
		case c == 'u' && s.d == Postgres && s.at(j) == '&' && s.at(j+1) == '\'':
			return s.quoted(i, j+1, '\'', false, String, inString, "string literal")
		case c == 'u' && s.d == Postgres && s.at(j) == '&' && s.at(j+1) == '"':
			return s.quoted(i, j+1, '"', false, QuotedIdentifier, inQuotedIdent, "quoted identifier")
		}
	}
	s.emit(wordKind(s.src[i:j]), i, j)
	return j, nil
}

// multiOps are the multi-character operators lexed as one token, longest
// first. None contains "--" or "/*", so comments are always seen first.
var multiOps = []string{
	"->>", "#>>", "<->", "<=>", "<#>", "!~*", "<<=", ">>=",
	"::", ":=", "=>", "->", "#>", "<=", ">=", "<>", "!=", "||", "&&", "<<", ">>",
	"@>", "<@", "?|", "?&", "!~", "~*", "@@",
}

// other lexes parameter markers, MySQL variables, punctuation and operators.
func (s *scanner) other(i int) int {
	c, n := s.src[i], s.at(i+1)
	switch {
	case c == '?' && s.d != Postgres:
		// ? is a parameter; SQLite also numbers it explicitly: ?NNN.
		j := i + 1
		for s.d == SQLite && isDigit(s.at(j)) {
			j++
		}
		s.emit(BindParam, i, j)
		return j
	case s.d == SQLite && (c == ':' || c == '@' || c == '$' || c == '#') && isWordChar(n):
		// SQLite named parameters take a number too, so they would shift
		// the numbering of bound inputs.
		j := s.wordEnd(i + 1)
		s.emit(BindParam, i, j)
		return j
	case s.d == MySQL && c == '@' && (isWordChar(n) || n == '@' && isWordChar(s.at(i+2))):
		// @user_variable, @@system_variable.
		j := i + 1
		if n == '@' {
			j++
		}
		j = s.wordEnd(j)
		s.emit(Identifier, i, j)
		return j
	case strings.IndexByte(";,.()[]{}", c) >= 0:
		s.emit(Punct, i, i+1)
		return i + 1
	}
	for _, op := range multiOps {
		if strings.HasPrefix(s.src[i:], op) {
			s.emit(Operator, i, i+len(op))
			return i + len(op)
		}
	}
	s.emit(Operator, i, i+1)
	return i + 1
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isWordStart: letters, _ and any byte of a multi-byte UTF-8 character, as
// in all three servers' lexers.
func isWordStart(c byte) bool {
	return 'a' <= c|0x20 && c|0x20 <= 'z' || c == '_' || c >= 0x80
}

// isWordChar: a word continues with digits and $ too (a$b is one identifier
// in Postgres, SQLite and MySQL).
func isWordChar(c byte) bool {
	return isWordStart(c) || isDigit(c) || c == '$'
}
