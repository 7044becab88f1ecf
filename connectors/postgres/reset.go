package postgres

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
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

// Each reset as one simple-protocol query (one round trip), for when it
// cannot ride in the statement's own pipeline.
var (
	sessionResetQuery  = strings.Join(sessionReset, "; ")
	readOnlyResetQuery = strings.Join(readOnlyReset, "; ")
)

// queueReset appends readOnlyReset to a batch.
func queueReset(b *pgx.Batch) {
	for _, q := range readOnlyReset {
		b.Queue(q)
	}
}

// readReset reads the results of queueReset's commands.
func readReset(br pgx.BatchResults) error {
	for range readOnlyReset {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	return nil
}

// resetSession ends any transaction left open on conn and resets its
// session (q: sessionResetQuery or readOnlyResetQuery) in one round trip,
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
