package mysql

import (
	"strings"

	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// Session state (README "Database safety", session reset). The driver
// cannot send COM_RESET_CONNECTION, and a server-side reset would cost a
// round trip on every call. Instead the statement is read: one that may
// leave something in its session for the next caller (a user variable, a
// named lock, a SET, a temporary table, an open transaction, a prepared
// statement, another default database) has its connection closed after the
// call, so the next caller gets a fresh session with the connector's
// settings (connector.setup). Other statements cost nothing more. A stored
// routine of the operator's that changes its session unseen is not
// covered: see README.

// sessionVerbs start a statement that leaves nothing in the session.
var sessionVerbs = map[string]bool{
	"SELECT": true, "WITH": true, "VALUES": true, "TABLE": true, "SHOW": true,
	"EXPLAIN": true, "DESCRIBE": true, "DESC": true,
	"INSERT": true, "UPDATE": true, "DELETE": true, "REPLACE": true,
}

// sessionFunctions change the session: named locks, and LAST_INSERT_ID(x)
// which sets the value the next LAST_INSERT_ID() returns.
var sessionFunctions = map[string]bool{
	"GET_LOCK": true, "RELEASE_LOCK": true, "RELEASE_ALL_LOCKS": true, "LAST_INSERT_ID": true,
}

// changesSession reports whether the statement may leave state in its
// session. A statement that does not lex is not run by the server either;
// it is treated as changing the session.
func changesSession(query string) bool {
	toks, err := sqltemplate.Lex(query, sqltemplate.MySQL)
	if err != nil {
		return true
	}
	first := 0
	for first < len(toks) && toks[first].IsPunct("(") {
		first++
	}
	if first == len(toks) {
		return false
	}
	if k := toks[first].Kind; k != sqltemplate.Keyword && k != sqltemplate.Identifier || !sessionVerbs[strings.ToUpper(toks[first].Text)] {
		return true
	}
	for i, t := range toks {
		switch {
		case t.Kind == sqltemplate.Identifier && strings.HasPrefix(t.Text, "@") && !strings.HasPrefix(t.Text, "@@"):
			return true // @v, also read: a caller reads what another set
		case t.Kind == sqltemplate.Operator && (t.Text == "@" || t.Text == ":="):
			return true // @'v', @`v`
		case i+1 < len(toks) && toks[i+1].IsPunct("(") && sessionFunctions[strings.ToUpper(unquoteName(t))]:
			return true
		}
	}
	return false
}

// unquoteName is a function name token without its backquotes.
func unquoteName(t sqltemplate.Token) string {
	if t.Kind == sqltemplate.QuotedIdentifier && len(t.Text) >= 2 {
		return strings.ReplaceAll(t.Text[1:len(t.Text)-1], "``", "`")
	}
	return t.Text
}
