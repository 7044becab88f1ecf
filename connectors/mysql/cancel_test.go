package mysql

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

// running counts statements on the server whose text contains marker
// (other than the counting query itself).
func running(t *testing.T, marker string) int {
	t.Helper()
	var n int
	err := testservices.MySQLDB(t).QueryRow(
		"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE CONCAT('%', ?, '%') AND INFO NOT LIKE '%PROCESSLIST%'",
		marker).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitGone waits until no statement containing marker runs on the server.
func waitGone(t *testing.T, marker string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for running(t, marker) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("statement %q still running on the server after %v", marker, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestStatementTimeout(t *testing.T) {
	for _, ro := range []bool{false, true} {
		name := map[bool]string{false: "read-write", true: "read-only"}[ro]
		t.Run(name, func(t *testing.T) {
			c := open(t, Config{StatementTimeout: 300 * time.Millisecond, ReadOnly: ro, MaxConns: 2})
			marker := testservices.MySQLTable(t, "timeout")
			start := time.Now()
			_, err := c.Query(ctxTimeout(t, 20*time.Second), "SELECT SLEEP(?) AS `"+marker+"`", []any{int64(10)})
			pe := conntest.PublicErr(t, err)
			if pe.Public != msgStmtTimeout {
				t.Errorf("error %q, want %q", pe.Public, msgStmtTimeout)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("timeout took %v", d)
			}
			waitGone(t, marker, 3*time.Second)
			// The pool still serves.
			conntest.SameValue(t, "after timeout", conntest.Scalar(t, c, "SELECT ?", int64(1)), int64(1))
		})
	}
}

// TestStatementTimeoutOnWrite: MySQL's max_execution_time only covers
// SELECT; a slow write is stopped by the client deadline and KILL QUERY.
func TestStatementTimeoutOnWrite(t *testing.T) {
	tbl := testservices.MySQLTable(t, "slowwrite")
	testservices.MySQLExec(t, "CREATE TABLE "+tbl+" (x INT)")
	c := open(t, Config{StatementTimeout: 300 * time.Millisecond})
	start := time.Now()
	_, err := c.Query(ctxTimeout(t, 20*time.Second), "INSERT INTO "+tbl+" SELECT SLEEP(?)", []any{int64(10)})
	pe := conntest.PublicErr(t, err)
	if pe.Public != msgStmtTimeout {
		t.Errorf("error %q, want %q", pe.Public, msgStmtTimeout)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("timeout took %v", d)
	}
	waitGone(t, tbl, 3*time.Second)
	conntest.SameValue(t, "rows written", conntest.Scalar(t, c, "SELECT COUNT(*) FROM "+tbl), int64(0))
}

// TestCancelKillsStatement: a caller that goes away (the MCP client
// disconnected) gets "canceled" at once, and the statement stops on the
// server instead of running to its end.
func TestCancelKillsStatement(t *testing.T) {
	for _, ro := range []bool{false, true} {
		name := map[bool]string{false: "read-write", true: "read-only"}[ro]
		t.Run(name, func(t *testing.T) {
			c := open(t, Config{ReadOnly: ro, MaxConns: 1})
			marker := testservices.MySQLTable(t, "cancel")
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := c.Query(ctx, "SELECT SLEEP(?) AS `"+marker+"`", []any{int64(30)})
				done <- err
			}()
			deadline := time.Now().Add(5 * time.Second)
			for running(t, marker) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("statement never started")
				}
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
			select {
			case err := <-done:
				if pe := conntest.PublicErr(t, err); pe.Public != msgCanceled {
					t.Errorf("error %q, want %q", pe.Public, msgCanceled)
				}
			case <-time.After(2 * time.Second):
				t.Fatal("Query did not return after cancel")
			}
			waitGone(t, marker, 3*time.Second)
			// The single pooled connection was replaced, not leaked.
			conntest.SameValue(t, "after cancel", conntest.Scalar(t, c, "SELECT ?", int64(2)), int64(2))
		})
	}
}

// TestConcurrentQueries runs calls in parallel on a small pool (with -race).
func TestConcurrentQueries(t *testing.T) {
	c := open(t, Config{MaxConns: 3, ReadOnly: true})
	errs := make(chan error, 40)
	for i := range 40 {
		go func() {
			rows, err := c.Query(ctxTimeout(t, 20*time.Second), "SELECT ? * 2 AS v", []any{int64(i)})
			if err == nil && rows.Values[0][0] != int64(2*i) {
				err = fmt.Errorf("%d * 2 = %v", i, rows.Values[0][0])
			}
			errs <- err
		}()
	}
	for range 40 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
