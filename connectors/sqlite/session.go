package sqlite

import (
	"database/sql/driver"
	"strings"

	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// Session state (README "Database safety", session reset). A read-only
// connection cannot change its session (query_only, and the authorizer
// refuses ATTACH). On a read-write connector a PRAGMA, an ATTACH, a
// temporary table or an unfinished BEGIN would stay on the pooled
// connection for the next caller, so a statement that does not start like
// a query or a DML statement has its connection closed after the call.
// Not for an in-memory database, which lives only as long as its
// connections.

// dmlVerbs start a statement that leaves nothing in the session.
var dmlVerbs = map[string]bool{
	"SELECT": true, "WITH": true, "VALUES": true, "EXPLAIN": true,
	"INSERT": true, "UPDATE": true, "DELETE": true, "REPLACE": true,
}

// changesSession reports whether a statement may leave state in its
// connection's session.
func changesSession(query string) bool {
	toks, err := sqltemplate.Lex(query, sqltemplate.SQLite)
	if err != nil {
		return true
	}
	for _, t := range toks {
		if t.IsPunct("(") {
			continue
		}
		return !(t.Kind == sqltemplate.Keyword || t.Kind == sqltemplate.Identifier) || !dmlVerbs[strings.ToUpper(t.Text)]
	}
	return false
}

// discardConn is for sql.Conn.Raw: database/sql closes a connection whose
// Raw callback reports it bad.
func discardConn(any) error { return driver.ErrBadConn }
