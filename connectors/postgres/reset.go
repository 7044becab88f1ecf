package postgres

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// sessionReset puts a pooled connection's session back as it was opened
// (README "Database safety", session reset), so that nothing one call left
// in it reaches the next caller: settings changed by SET or
// set_config(..., false) (statement_timeout, search_path ...: RESET ALL
// returns them to the connector's and the DSN's values), a role, session
// advisory locks, LISTEN, cursors WITH HOLD, temporary tables and
// currval/lastval. It is DISCARD ALL without DEALLOCATE ALL and DISCARD
// PLANS, which would drop pgx's prepared statements and make the next
// call prepare its statement again; statements a caller PREPAREd itself
// (a read-write connector's PREPARE statement) therefore survive.
var sessionReset = []string{
	"RESET SESSION AUTHORIZATION", // before RESET ROLE: it clears the role too
	"RESET ROLE",
	"RESET ALL",
	"SELECT pg_advisory_unlock_all()",
	"UNLISTEN *",
	"CLOSE ALL",
	"DISCARD TEMP",
	"DISCARD SEQUENCES",
}

// readOnlyReset is the part of sessionReset a statement in a READ ONLY
// transaction can need, even through a function of the operator's: it can
// change settings and the role (set_config), take session advisory locks
// and LISTEN, but not create a temporary table, declare a cursor WITH
// HOLD, advance a sequence or change the session authorization (which
// needs a superuser). Pipelined after COMMIT it costs no round trip, and
// each command left out is server time saved on every call.
var readOnlyReset = []string{
	"RESET ALL",
	"RESET ROLE",
	"SELECT pg_advisory_unlock_all()",
	"UNLISTEN *",
}

// pipelinedReset follows a read-write statement that can share a
// pipeline with it (pipelinable): readOnlyReset, plus what a function
// called by the statement can leave in a read-write transaction
// (temporary tables, currval/lastval). A statement that could leave
// anything else (SET, LISTEN, DECLARE ... WITH HOLD, SET SESSION
// AUTHORIZATION) does not start like a query or a DML statement, and gets
// the whole sessionReset after it.
var pipelinedReset = append(append([]string{}, readOnlyReset...), "DISCARD TEMP", "DISCARD SEQUENCES")

// sessionResetQuery is sessionReset as one simple-protocol query: one
// round trip.
var sessionResetQuery = strings.Join(sessionReset, "; ")

// pipelinable reports whether a read-write statement may run in a
// pipeline, inside the implicit transaction it makes, followed by
// pipelinedReset: a query or a DML statement. Others (VACUUM, CREATE INDEX
// CONCURRENTLY, SET ...) run alone, and sessionReset after them.
func pipelinable(sql string) bool { return pipelineVerbs[firstVerb(sql)] }

// firstVerb is the first word of sql (past opening parentheses), upper
// case: its statement's verb. "" when sql starts otherwise or does not lex.
func firstVerb(sql string) string {
	toks, err := sqltemplate.Lex(sql, sqltemplate.Postgres)
	if err != nil {
		return ""
	}
	for _, t := range toks {
		if t.IsPunct("(") {
			continue
		}
		if t.Kind == sqltemplate.Keyword || t.Kind == sqltemplate.Identifier {
			return strings.ToUpper(t.Text)
		}
		return ""
	}
	return ""
}

// pipelinableMemo remembers pipelinable per statement text. A tool's
// rendered statement is the same text on every call (its inputs are bound
// as parameters), and lexing it on every call cost about 3 % of a DB
// tool's CPU and a dozen allocations. Bounded: once maxPipelinableMemo
// texts are known (templates whose text varies per call), new texts are
// lexed every time.
type pipelinableMemo struct {
	known sync.Map // statement text → bool
	n     atomic.Int32
}

const maxPipelinableMemo = 4096

func (p *pipelinableMemo) of(sql string) bool {
	if v, ok := p.known.Load(sql); ok {
		return v.(bool)
	}
	ok := pipelinable(sql)
	if p.n.Load() < maxPipelinableMemo {
		if _, loaded := p.known.LoadOrStore(sql, ok); !loaded {
			p.n.Add(1)
		}
	}
	return ok
}

var pipelineVerbs = map[string]bool{
	"SELECT": true, "WITH": true, "VALUES": true, "TABLE": true,
	"INSERT": true, "UPDATE": true, "DELETE": true, "MERGE": true,
}

// resetSession ends any transaction left open on conn and resets its
// session (q: reset commands joined by ";") in one round trip,
// under its own short deadline (after a cancellation ctx is already done,
// and the connection is still worth saving). A connection it cannot
// reset is closed: pgxpool then discards it rather than hand its session
// to the next caller.
func resetSession(ctx context.Context, conn *pgx.Conn, q string) {
	if conn.IsClosed() {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	if conn.PgConn().TxStatus() != 'I' {
		// Left inside a transaction, or an aborted one (a failed READ ONLY
		// batch). Not on an idle session: the server would log a warning.
		q = "ROLLBACK; " + q
	}
	if _, err := conn.PgConn().Exec(rctx, q).ReadAll(); err != nil {
		_ = conn.Close(rctx)
	}
}
