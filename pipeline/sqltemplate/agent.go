package sqltemplate

import (
	"fmt"
	"strings"
)

// CheckAgentQuery checks a statement written at run time by an agent
// (pipeline/sqlagent) before it is sent to the database, which stays the
// guard of what no lexer sees (docs/sql-agent.md). It is stricter than
// Check, which serves operators' statements at load: text it cannot read
// is refused rather than left to the server (an unterminated string, a
// template, a named SQLite parameter, a Postgres OPERATOR() of a schema
// other than pg_catalog, whose function no list can know); only a query
// (SELECT, WITH, VALUES, TABLE) runs; a second statement, a write inside
// the query, and a call of a blocked function or of one of
// ReadOnlyBlockList(d) (always, whatever the connector's block_functions
// says) are refused. Messages are written for the agent.
func CheckAgentQuery(src string, d Dialect, blocked []string) error {
	toks, spans, lerr := lex(src, d)
	if lerr != nil {
		return errorAt(src, lerr.off, lerr.msg+": the statement cannot be read, so it is not run")
	}
	off, msg := agentRefusal(src, toks, spans, d, blocked)
	if msg != "" {
		return errorAt(src, off, msg)
	}
	return nil
}

// agentVerbs start the statements an agent may run.
var agentVerbs = wordSet(`SELECT WITH VALUES TABLE`)

const agentHint = "only a query runs here (SELECT, WITH, VALUES or TABLE), read-only"

func agentRefusal(src string, toks []Token, spans []span, d Dialect, blocked []string) (int, string) {
	first := 0
	for first < len(toks) && toks[first].IsPunct("(") {
		first++
	}
	if first == len(toks) {
		return 0, "no statement: " + agentHint
	}
	if off, msg := executableComment(src, spans, d); msg != "" {
		return off, msg
	}
	if off, msg := secondStatement(toks); msg != "" {
		return off, msg
	}
	for i, t := range toks {
		switch {
		case t.Kind == Placeholder:
			return t.Offset, "{{ ... }} is a template of the gateway's, not SQL: pass values in params"
		case t.Kind == BindParam && d == SQLite && t.Text[0] != '?':
			return t.Offset, fmt.Sprintf("named parameter %s: write ? (or ?N) and pass the values in params, in order", t.Text)
		case d == Postgres && t.IsWord("OPERATOR") && i+1 < len(toks) && toks[i+1].IsPunct("("):
			if off, msg := foreignOperator(toks[i+2:]); msg != "" {
				return off, msg
			}
		}
	}
	if lead := toks[first]; !agentVerbs[upperWord(lead)] {
		return lead.Offset, fmt.Sprintf("%s is not a query: %s", lead.Text, agentHint)
	}
	list := append(append([]string{}, blocked...), ReadOnlyBlockList(d)...)
	if off, name := blockedCall(toks, d, list, nil); name != "" {
		return off, fmt.Sprintf("calls %s(), which is refused here: its effect could outlive the read-only transaction or reach outside it", name)
	}
	return writeIn(toks, d, agentHint)
}

// foreignOperator reads OPERATOR(schema.op): an operator of pg_catalog is
// a built-in one (none calls a blocked function); one of any other schema
// runs a function of someone's choosing that no block list knows.
func foreignOperator(rest []Token) (int, string) {
	if len(rest) < 2 || !rest[1].IsPunct(".") {
		return 0, ""
	}
	schema := rest[0].Text
	if rest[0].Kind == QuotedIdentifier {
		schema = unquoteIdent(schema, '\\')
	} else {
		schema = strings.ToLower(schema)
	}
	if schema == "pg_catalog" {
		return 0, ""
	}
	return rest[0].Offset, fmt.Sprintf("OPERATOR(%s...) names an operator outside pg_catalog, whose function cannot be checked: use the operator itself", rest[0].Text)
}
