package sqltemplate

import "strings"

// TokenKind classifies a significant token. Whitespace and comments are not
// tokens: checks that look at tokens must not be fooled by them.
type TokenKind uint8

const (
	// Keyword is an unquoted word in the keyword list below. Whether a word
	// is listed is a convenience for readers of token dumps; decisions should
	// use Token.IsWord, which treats Keyword and Identifier alike, so that a
	// word missing from the list cannot slip past a check.
	Keyword TokenKind = iota + 1
	// Identifier is any other unquoted word (table, column, function name,
	// MySQL @variable).
	Identifier
	// QuotedIdentifier is "x", `x`, [x] (SQLite) or U&"x" (Postgres).
	QuotedIdentifier
	// String is a string literal including its quotes and prefix: 'x',
	// E'x', U&'x', N'x', X'00', B'01', MySQL "x", Postgres $tag$x$tag$.
	String
	// Number is a numeric literal (any trailing word characters included).
	Number
	// Operator is an operator or any other character that is not Punct.
	Operator
	// Punct is one of ; , . ( ) [ ] { }.
	Punct
	// Placeholder is a template {{ ... }} written in SQL code.
	Placeholder
	// BindParam is a parameter marker of the dialect: $1 (Postgres),
	// ? (MySQL, SQLite), ?NNN :name @name $name (SQLite). Compile refuses
	// them in operator text; they appear in Statement.Tokens and in rendered
	// SQL where inputs are bound.
	BindParam
)

var kindNames = [...]string{
	Keyword:          "Keyword",
	Identifier:       "Identifier",
	QuotedIdentifier: "QuotedIdentifier",
	String:           "String",
	Number:           "Number",
	Operator:         "Operator",
	Punct:            "Punct",
	Placeholder:      "Placeholder",
	BindParam:        "BindParam",
}

func (k TokenKind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "TokenKind(?)"
}

// Token is one significant token. Text is the exact source text (quotes,
// prefixes and escapes included); Offset is its byte offset in the lexed
// text.
type Token struct {
	Kind   TokenKind
	Text   string
	Offset int
}

// IsWord reports whether t is the unquoted word w, case-insensitively
// (Keyword or Identifier). A quoted "select" is not the word SELECT.
func (t Token) IsWord(w string) bool {
	return (t.Kind == Keyword || t.Kind == Identifier) && strings.EqualFold(t.Text, w)
}

// IsPunct reports whether t is the punctuation p.
func (t Token) IsPunct(p string) bool {
	return t.Kind == Punct && t.Text == p
}

// keywords are the words lexed as Keyword in every dialect: the reserved
// words of standard SQL that matter for reading a statement, plus every
// statement verb of the three dialects so that a token dump of a write is
// obvious.
var keywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		ALL ALTER ANALYZE AND ANY ARRAY AS ASC ATTACH BEGIN BETWEEN BOTH BY
		CALL CASE CAST CHECK CHECKPOINT CLUSTER COLLATE COLUMN COMMENT COMMIT
		CONFLICT CONSTRAINT COPY CREATE CROSS CURRENT_DATE CURRENT_TIME
		CURRENT_TIMESTAMP CURRENT_USER DEALLOCATE DEFAULT DELETE DESC DESCRIBE
		DETACH DISCARD DISTINCT DO DROP ELSE END ESCAPE EXCEPT EXECUTE EXISTS
		EXPLAIN FALSE FETCH FILTER FIRST FOR FOREIGN FROM FULL GRANT GROUP
		HANDLER HAVING IGNORE ILIKE IMPORT IN INNER INSERT INTERSECT INTERVAL
		INTO IS JOIN KEY KILL LAST LATERAL LEADING LEFT LIKE LIMIT LISTEN LOAD
		LOCK MERGE NATURAL NOT NOTIFY NULL NULLS OFFSET ON ONLY OPTIMIZE OR
		ORDER OUTER OVER PARTITION PRAGMA PREPARE PRIMARY REFERENCES REFRESH
		REINDEX RELEASE RENAME REPLACE RESET RETURNING REVOKE RIGHT ROLLBACK
		ROW ROWS SAVEPOINT SELECT SET SHOW SIMILAR SOME START TABLE THEN TO
		TRAILING TRUE TRUNCATE UNION UNIQUE UNLISTEN UPDATE USE USING VACUUM
		VALUES WHEN WHERE WINDOW WITH`) {
		m[w] = true
	}
	return m
}()

func wordKind(w string) TokenKind {
	if len(w) <= 17 && keywords[strings.ToUpper(w)] {
		return Keyword
	}
	return Identifier
}

// Name is the name a word or a quoted identifier stands for, its quotes
// and escapes removed; a word as written (how its case folds is the
// dialect's). ok is false for any other token.
func (t Token) Name() (name string, ok bool) {
	switch t.Kind {
	case Keyword, Identifier:
		return t.Text, true
	case QuotedIdentifier:
		return unquoteIdent(t.Text, '\\'), true
	}
	return "", false
}
