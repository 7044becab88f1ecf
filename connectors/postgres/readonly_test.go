package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestReadOnlyRefusesWrites: PostgreSQL itself refuses the write, whatever
// shape it takes, and the data is unchanged.
func TestReadOnlyRefusesWrites(t *testing.T) {
	admin := testservices.PostgresConn(t)
	s := testservices.PostgresSchema(t, admin)
	table := s + ".items"
	testservices.PostgresExec(t, admin, "CREATE TABLE "+table+" (id int PRIMARY KEY, name text)")
	testservices.PostgresExec(t, admin, "CREATE SEQUENCE "+s+".seq")
	testservices.PostgresExec(t, admin, "INSERT INTO "+table+" VALUES (1, 'a'), (2, 'b')")

	// One connection only: every statement below reuses it, so this also
	// checks that a refused write leaves it clean for the next one.
	c := open(t, postgres.Config{ReadOnly: true, MaxConns: 1})
	writes := []struct {
		name  string
		sql   string
		args  []any
		state string // SQLSTATE expected in the public message
	}{
		{"insert", "INSERT INTO " + table + " VALUES ($1, 'x')", []any{int64(3)}, "25006"},
		{"update returning", "UPDATE " + table + " SET name = 'z' RETURNING id", nil, "25006"},
		{"delete in CTE", "WITH gone AS (DELETE FROM " + table + " RETURNING *) SELECT count(*) FROM gone", nil, "25006"},
		{"insert in CTE", "WITH ins AS (INSERT INTO " + table + " VALUES (9, 'x') RETURNING id) SELECT id FROM ins", nil, "25006"},
		{"ddl", "CREATE TABLE " + s + ".other (id int)", nil, "25006"},
		{"nextval", "SELECT nextval('" + s + ".seq')", nil, "25006"},
		// Switching the transaction to read-write is only allowed before
		// its first query, i.e. as a statement of its own, which then has
		// nothing left to write with; inside a writing statement the
		// executor refuses the write before the switch is evaluated.
		{"switch to read-write in the statement",
			"WITH rw AS (SELECT set_config('transaction_read_only', 'off', true)) INSERT INTO " + table + " SELECT 8, 'x' FROM rw",
			nil, "25006"},
		{"switch to read-write in a select", "SELECT set_config('transaction_read_only', 'off', true)", nil, "25001"},
		// The extended protocol takes one statement per Parse.
		{"second statement", "SET TRANSACTION READ WRITE; INSERT INTO " + table + " VALUES (7, 'x')", nil, "42601"},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			_, err := c.Query(context.Background(), w.sql, w.args)
			pe := publicErr(t, err)
			if !strings.Contains(pe.Public, "(SQLSTATE "+w.state+")") {
				t.Errorf("public message %q does not carry SQLSTATE %s", pe.Public, w.state)
			}
		})
	}

	rows := query(t, c, "SELECT id, name FROM "+table+" ORDER BY id")
	sameValue(t, "data after refused writes", rows.Values, [][]any{{int64(1), "a"}, {int64(2), "b"}})

	st := c.Pool().Stat()
	if st.NewConnsCount() != 1 || st.TotalConns() != 1 {
		t.Errorf("refused writes cost connections: %d created, %d open; want 1 and 1",
			st.NewConnsCount(), st.TotalConns())
	}
}

// TestReadOnlyFailuresLeaveConnectionClean: after every kind of failure
// (a runtime error inside the transaction, a statement that does not
// parse, a cancellation) the single pooled connection is reused, idle and
// outside any transaction.
func TestReadOnlyFailuresLeaveConnectionClean(t *testing.T) {
	app := testservices.Name("edgemcp_ro")
	c := open(t, postgres.Config{DSN: testservices.PostgresURLWith(t, "application_name", app), ReadOnly: true, MaxConns: 1})
	admin := testservices.PostgresConn(t)

	failures := []struct {
		name    string
		sql     string
		timeout time.Duration
	}{
		{"runtime error", "SELECT 1 / 0", 0},
		{"parse error", "SELEC 1", 0},
		{"unknown column", "SELECT nope", 0},
		{"canceled", "SELECT pg_sleep(5)", 200 * time.Millisecond},
	}
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			ctx := context.Background()
			if f.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, f.timeout)
				defer cancel()
			}
			_, err := c.Query(ctx, f.sql, nil)
			publicErr(t, err)

			var state string
			if err := admin.QueryRow(context.Background(),
				"SELECT state FROM pg_stat_activity WHERE application_name = $1", app).Scan(&state); err != nil {
				t.Fatalf("find the connector's backend: %v", err)
			}
			if state != "idle" {
				t.Errorf("backend state after failure = %q, want idle", state)
			}
			sameValue(t, "next query", scalar(t, c, "SELECT 1"), int64(1))
		})
	}
	if n := c.Pool().Stat().NewConnsCount(); n != 1 {
		t.Errorf("%d connections created, want 1 (a failure must not cost the connection)", n)
	}
}

// TestReadWriteWrites is the control: without read_only the same writes
// succeed, and RETURNING rows come back.
func TestReadWriteWrites(t *testing.T) {
	admin := testservices.PostgresConn(t)
	s := testservices.PostgresSchema(t, admin)
	table := s + ".items"
	testservices.PostgresExec(t, admin, "CREATE TABLE "+table+" (id int PRIMARY KEY, name text)")

	c := open(t, postgres.Config{})
	rows := query(t, c, "INSERT INTO "+table+" VALUES ($1, $2) RETURNING id, name", int64(1), "a")
	sameValue(t, "returning", rows.Values, [][]any{{int64(1), "a"}})
	rows = query(t, c, "UPDATE "+table+" SET name = 'b'")
	sameValue(t, "no result columns", rows.Columns, []string{})
	sameValue(t, "after update", scalar(t, c, "SELECT name FROM "+table), "b")
}
