package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestPoolMaxConns: with max_conns 2, eight concurrent slow statements never
// hold more than two server sessions, as counted by the server itself.
func TestPoolMaxConns(t *testing.T) {
	app := testservices.Name("edgemcp_pool")
	c := open(t, postgres.Config{DSN: testservices.PostgresURLWith(t, "application_name", app), MaxConns: 2})
	admin := testservices.PostgresConn(t)

	const workers, sleep = 8, 150 * time.Millisecond
	var wg sync.WaitGroup
	var failed atomic.Int32
	start := time.Now()
	for range workers {
		wg.Go(func() {
			sql := fmt.Sprintf("SELECT pg_sleep(%g)", sleep.Seconds())
			if _, err := c.Query(context.Background(), sql, nil); err != nil {
				t.Errorf("Query: %v", err)
				failed.Add(1)
			}
		})
	}

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	maxSeen := 0
	for polling := true; polling; {
		select {
		case <-done:
			polling = false
		default:
			var n int
			if err := admin.QueryRow(context.Background(),
				"SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n); err != nil {
				t.Fatalf("count sessions: %v", err)
			}
			maxSeen = max(maxSeen, n)
			time.Sleep(10 * time.Millisecond)
		}
	}
	elapsed := time.Since(start)

	if failed.Load() > 0 {
		return
	}
	if maxSeen > 2 {
		t.Errorf("server saw %d sessions, want at most 2", maxSeen)
	}
	if maxSeen == 0 {
		t.Errorf("never saw the connector's sessions (application_name %s)", app)
	}
	if total := c.Pool().Stat().TotalConns(); total > 2 {
		t.Errorf("pool holds %d connections, want at most 2", total)
	}
	// Eight sleeps through two connections take four rounds.
	if want := 4 * sleep; elapsed < want {
		t.Errorf("finished in %v, faster than %v: more than two ran at once", elapsed, want)
	}
}

// TestApplicationName: sessions are labeled edgemcp unless the DSN says
// otherwise.
func TestApplicationName(t *testing.T) {
	c := open(t, postgres.Config{})
	sameValue(t, "application_name", scalar(t, c, "SELECT current_setting('application_name')"), "edgemcp")
}

// TestStalePlanRetried: a cached statement whose result type changed
// (ALTER TABLE under a running gateway) is re-prepared transparently.
func TestStalePlanRetried(t *testing.T) {
	admin := testservices.PostgresConn(t)
	s := testservices.PostgresSchema(t, admin)
	for _, readOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("ro=%v", readOnly), func(t *testing.T) {
			table := testservices.Name(s + ".t")
			testservices.PostgresExec(t, admin, "CREATE TABLE "+table+" (a int)")
			testservices.PostgresExec(t, admin, "INSERT INTO "+table+" VALUES (1)")
			c := open(t, postgres.Config{ReadOnly: readOnly, MaxConns: 1})
			sql := "SELECT * FROM " + table
			sameValue(t, "before", query(t, c, sql).Columns, []string{"a"})
			testservices.PostgresExec(t, admin, "ALTER TABLE "+table+" ADD COLUMN b text DEFAULT 'x'")
			rows := query(t, c, sql)
			sameValue(t, "after", rows.Columns, []string{"a", "b"})
			sameValue(t, "after", rows.Values, [][]any{{int64(1), "x"}})
		})
	}
}
