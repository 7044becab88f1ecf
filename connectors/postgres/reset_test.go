package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestSessionReset: on a one-connection pool, whatever a call leaves in
// its session (a setting, a role, an advisory lock, LISTEN, a temporary
// table), the next caller does not find it, on the read_only path and the
// read-write one (reset pipelined with the statement; with the simple
// protocol, sent in the same query string), after a success and after a
// failure; and with reset proofs (proofs.go), which none of these
// statements passes.
func TestSessionReset(t *testing.T) {
	admin := testservices.PostgresConn(t)
	for _, tc := range []struct {
		ro     bool
		simple bool
		proofs bool
	}{{false, false, false}, {true, false, false}, {false, true, false}, {false, false, true}, {true, false, true}} {
		ro := tc.ro
		t.Run(fmt.Sprintf("read_only=%t simple=%t proofs=%t", ro, tc.simple, tc.proofs), func(t *testing.T) {
			dsn := testservices.PostgresURL(t)
			if tc.simple {
				dsn = testservices.PostgresURLWith(t, "default_query_exec_mode", "simple_protocol")
			}
			c := open(t, postgres.Config{DSN: dsn, ReadOnly: ro, MaxConns: 1, StatementTimeout: 1234 * time.Millisecond})
			if tc.proofs {
				c.EnableResetProofs(time.Hour)
			}
			key := time.Now().UnixNano()
			locked := func() bool {
				var free bool
				if err := admin.QueryRow(context.Background(), "SELECT pg_try_advisory_lock($1)", key).Scan(&free); err != nil {
					t.Fatal(err)
				}
				if free {
					testservices.PostgresExec(t, admin, "SELECT pg_advisory_unlock($1)", key)
				}
				return !free
			}

			// Caller A turns the statement timeout off for the session;
			// caller B still runs under the connector's.
			scalar(t, c, "SELECT set_config('statement_timeout', '0', false)")
			if got := scalar(t, c, "SELECT current_setting('statement_timeout')"); got != "1234ms" {
				t.Errorf("statement_timeout after set_config by the previous caller: %v, want 1234ms", got)
			}
			scalar(t, c, "SELECT set_config('role', 'pg_monitor', false)")
			if got := scalar(t, c, "SELECT current_user = session_user"); got != true {
				t.Errorf("role set by the previous caller still in force")
			}

			// A session advisory lock is released with the call.
			scalar(t, c, "SELECT pg_advisory_lock($1::int8)", key)
			if locked() {
				t.Errorf("advisory lock taken by a finished call is still held")
			}
			// Also when the statement fails after taking it (a session
			// lock survives the rollback).
			if _, err := c.Query(context.Background(), "SELECT pg_advisory_lock($1::int8), 1/0", []any{key}); err == nil {
				t.Fatal("1/0 did not fail")
			}
			if locked() {
				t.Errorf("advisory lock taken by a failed call is still held")
			}

			// pgx's prepared statements survive the reset (no re-prepare
			// per call): the cached statements are still there.
			if n := scalar(t, c, "SELECT count(*) FROM pg_prepared_statements"); n.(int64) == 0 && !tc.simple {
				t.Errorf("no prepared statement left on the connection after the reset")
			}
			if got := scalar(t, c, "SELECT current_setting('application_name')"); got != "edgemcp" {
				t.Errorf("application_name after reset: %v", got)
			}
			if !ro {
				return
			}
			if got := scalar(t, c, "SELECT current_setting('default_transaction_read_only')"); got != "on" {
				t.Errorf("default_transaction_read_only after reset: %v", got)
			}
		})
	}
}

// TestSessionResetReadWrite: statements only a read-write connector runs,
// alone (SET, LISTEN ...: reset after them) or pipelined with the reset
// (queries and DML, also through a function of the schema).
func TestSessionResetReadWrite(t *testing.T) {
	admin := testservices.PostgresConn(t)
	s := testservices.PostgresSchema(t, admin)
	testservices.PostgresExec(t, admin, "CREATE SEQUENCE "+s+".seq")
	testservices.PostgresExec(t, admin, "CREATE TABLE "+s+".items (id int)")
	testservices.PostgresExec(t, admin, `CREATE FUNCTION `+s+`.make_temp() RETURNS int LANGUAGE plpgsql AS $$
		BEGIN CREATE TEMP TABLE items (id int); INSERT INTO items VALUES (666); RETURN 1; END $$`)
	c := open(t, postgres.Config{MaxConns: 1, StatementTimeout: 1234 * time.Millisecond})
	for _, tt := range []struct{ leave, check string }{
		{"SELECT " + s + ".make_temp()", "SELECT to_regclass('pg_temp.items') IS NULL"},
		{"INSERT INTO " + s + ".items VALUES (1) RETURNING id", "SELECT count(*) = 1 FROM " + s + ".items"},
		{"VACUUM " + s + ".items", "SELECT true"}, // not in a pipeline: it could not run there
		{"SET statement_timeout = 0", "SELECT current_setting('statement_timeout') = '1234ms'"},
		{"SET search_path = pg_catalog", "SELECT current_setting('search_path') <> 'pg_catalog'"},
		{"LISTEN edgemcp_reset_test", "SELECT count(*) = 0 FROM pg_listening_channels()"},
		{"CREATE TEMP TABLE edgemcp_reset_test (a int)", "SELECT to_regclass('pg_temp.edgemcp_reset_test') IS NULL"},
		{"DECLARE edgemcp_cur CURSOR WITH HOLD FOR SELECT 1", "SELECT count(*) = 0 FROM pg_cursors WHERE name = 'edgemcp_cur'"},
	} {
		if _, err := c.Query(context.Background(), tt.leave, nil); err != nil {
			t.Fatalf("%s: %v", tt.leave, err)
		}
		if got := scalar(t, c, tt.check); got != true {
			t.Errorf("after %q by the previous caller: %s is %v", tt.leave, tt.check, got)
		}
	}
}

// TestSessionResetSequences: currval/lastval of a previous caller's
// nextval are not readable by the next caller.
func TestSessionResetSequences(t *testing.T) {
	admin := testservices.PostgresConn(t)
	s := testservices.PostgresSchema(t, admin)
	testservices.PostgresExec(t, admin, "CREATE SEQUENCE "+s+".seq")
	c := open(t, postgres.Config{MaxConns: 1})
	scalar(t, c, "SELECT nextval('"+s+".seq')")
	if _, err := c.Query(context.Background(), "SELECT lastval()", nil); err == nil {
		t.Errorf("lastval() answered the previous caller's nextval")
	}
}
