package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestTerminatedBackendsRetried: every backend of the pool is terminated
// between calls (pg_terminate_backend returns before the backends have
// gone, so their FATAL messages are still on the way when the next calls
// take the stale connections). The calls that follow never reached the
// server: they are retried on fresh connections, and all succeed with
// their own answer. Without the retry about half of them fail.
func TestTerminatedBackendsRetried(t *testing.T) {
	admin := testservices.PostgresConn(t)
	for _, readOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("ro=%v", readOnly), func(t *testing.T) {
			app := testservices.Name("edgemcp_retry")
			const conns, rounds = 4, 12
			c := open(t, postgres.Config{DSN: testservices.PostgresURLWith(t, "application_name", app), MaxConns: conns, ReadOnly: readOnly})
			failed, wrong := 0, 0
			for round := range rounds {
				var wg sync.WaitGroup
				for range conns { // every pooled connection used once
					wg.Go(func() { _, _ = c.Query(context.Background(), "SELECT pg_sleep(0.01)", nil) })
				}
				wg.Wait()
				testservices.PostgresExec(t, admin, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", app)
				for i := range conns {
					want := int64(round*conns + i)
					rows, err := c.Query(context.Background(), "SELECT $1::int8", []any{want})
					switch {
					case err != nil:
						failed++
						t.Logf("round %d call %d: %v", round, i, err)
					case len(rows.Values) != 1 || rows.Values[0][0] != want:
						wrong++
						t.Errorf("round %d call %d: got %v, want %d", round, i, rows.Values, want)
					}
				}
			}
			if failed > 0 || wrong > 0 {
				t.Errorf("%d of %d calls failed, %d wrong answers; want none", failed, rounds*conns, wrong)
			}
		})
	}
}

// TestInFlightNotRetried: a statement whose backend is terminated while
// it runs may have executed: it fails with "database unavailable" and is
// not run again (the sequence it advanced moved once).
func TestInFlightNotRetried(t *testing.T) {
	admin := testservices.PostgresConn(t)
	s := testservices.PostgresSchema(t, admin)
	seq := testservices.Name(s + ".seq")
	testservices.PostgresExec(t, admin, "CREATE SEQUENCE "+seq)
	app := testservices.Name("edgemcp_inflight")
	c := open(t, postgres.Config{DSN: testservices.PostgresURLWith(t, "application_name", app), MaxConns: 1})

	// The sleep outlasts any wait for the termination below on a loaded
	// machine: the statement cannot end on its own first.
	errc := make(chan error, 1)
	go func() {
		_, err := c.Query(context.Background(), "SELECT nextval('"+seq+"'), pg_sleep(30)", nil)
		errc <- err
	}()
	// Running means the sequence moved: pg_stat_activity shows the text
	// from its Parse on, before it runs, and a backend ended then has not
	// run it (the connector rightly runs it again).
	deadline := time.Now().Add(30 * time.Second)
	for {
		var running bool
		if err := admin.QueryRow(context.Background(), "SELECT is_called FROM "+seq).Scan(&running); err != nil {
			t.Fatal(err)
		}
		if running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the statement never showed as running")
		}
		time.Sleep(5 * time.Millisecond)
	}
	testservices.PostgresExec(t, admin, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", app)
	err := <-errc
	if err == nil {
		t.Fatal("the terminated statement succeeded: it was run again")
	}
	sameValue(t, "error", publicErr(t, err).Public, "database unavailable")
	var last int64
	if err := admin.QueryRow(context.Background(), "SELECT last_value FROM "+seq).Scan(&last); err != nil {
		t.Fatal(err)
	}
	sameValue(t, "nextval calls", last, int64(1))
}
