package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TestStatementTimeout: the server-side statement_timeout ends a long
// statement and says so.
func TestStatementTimeout(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("ro=%v", readOnly), func(t *testing.T) {
			c := open(t, postgres.Config{ReadOnly: readOnly, StatementTimeout: 200 * time.Millisecond, MaxConns: 1})
			start := time.Now()
			_, err := c.Query(context.Background(), "SELECT pg_sleep(5)", nil)
			if pe := publicErr(t, err); pe.Public != "statement timed out" {
				t.Errorf("public message %q, want %q", pe.Public, "statement timed out")
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v with a 200ms statement_timeout", d)
			}
			// The connection survives a timeout.
			sameValue(t, "after timeout", scalar(t, c, "SELECT 1"), int64(1))
		})
	}
}

// TestContextDeadline: the caller's deadline is "timed out", distinct
// from the server's statement_timeout.
func TestContextDeadline(t *testing.T) {
	c := open(t, postgres.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.Query(ctx, "SELECT pg_sleep(5)", nil)
	if pe := publicErr(t, err); pe.Public != "timed out" {
		t.Errorf("public message %q, want %q", pe.Public, "timed out")
	}
}

// TestCancelStopsBackend: a canceled context (the client went away) ends
// the query quickly, the server stops running it rather than sleeping on
// for ten seconds, and the connection is kept for the next call.
func TestCancelStopsBackend(t *testing.T) {
	// A pool, not a single connection: the watcher goroutine and the test
	// both poll.
	admin, err := pgxpool.New(context.Background(), testservices.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, readOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("ro=%v", readOnly), func(t *testing.T) {
			c := open(t, postgres.Config{ReadOnly: readOnly, MaxConns: 1})
			marker := testservices.Name("cancel_marker")
			sql := "SELECT pg_sleep(10) /* " + marker + " */"

			ctx, cancel := context.WithCancel(context.Background())
			watcherDone := make(chan struct{})
			go func() {
				defer close(watcherDone)
				// Cancel once the statement is visibly running.
				if !waitActive(t, admin, marker, true, 5*time.Second) {
					t.Errorf("statement %q never showed up as active", marker)
				}
				cancel()
			}()
			start := time.Now()
			_, err := c.Query(ctx, sql, nil)
			elapsed := time.Since(start)
			cancel()
			<-watcherDone

			if pe := publicErr(t, err); pe.Public != "canceled" {
				t.Errorf("public message %q, want %q", pe.Public, "canceled")
			}
			if elapsed > 3*time.Second {
				t.Errorf("Query returned %v after start, want well under the 10s sleep", elapsed)
			}
			if !waitActive(t, admin, marker, false, 2*time.Second) {
				t.Errorf("backend still runs %q after cancel", marker)
			}
			sameValue(t, "after cancel", scalar(t, c, "SELECT 1"), int64(1))
			if n := c.Pool().Stat().NewConnsCount(); n != 1 {
				t.Errorf("%d connections created, want 1: the canceled one should be reused", n)
			}
		})
	}
}

// waitActive polls pg_stat_activity until a backend other than the
// poller's is (or is no longer) running a statement containing marker. It
// reports whether the wanted state was reached before timeout.
func waitActive(t *testing.T, admin *pgxpool.Pool, marker string, want bool, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		var n int
		err := admin.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_stat_activity
			 WHERE state = 'active' AND pid <> pg_backend_pid() AND strpos(query, $1) > 0`, marker).Scan(&n)
		if err != nil {
			t.Errorf("poll pg_stat_activity: %v", err)
			return false
		}
		if (n > 0) == want {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
