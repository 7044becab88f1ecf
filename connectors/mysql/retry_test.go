package mysql

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
)

// TestKilledConnectionsRetried: every pooled connection is killed between
// calls (KILL CONNECTION from a setup connection); the calls that follow
// take the stale connections, which are found dead before anything is
// written and replaced, and all get their own answer. The DSN turns the
// driver's liveness check off: the connector turns it back on, without
// which every one of these calls fails ("invalid connection").
func TestKilledConnectionsRetried(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("ro=%v", readOnly), func(t *testing.T) {
			const conns, rounds = 4, 8
			c := open(t, Config{MaxConns: conns, ReadOnly: readOnly, DSN: testservices.MySQLDSN(t) + "?checkConnLiveness=false"})
			failed, wrong := 0, 0
			for round := range rounds {
				var wg sync.WaitGroup
				ids := make(chan any, conns)
				for range conns { // every pooled connection used once
					wg.Go(func() {
						r, err := c.Query(context.Background(), "SELECT CONNECTION_ID(), SLEEP(0.01)", nil)
						if err != nil {
							t.Errorf("filling the pool: %v", err)
							return
						}
						ids <- r.Values[0][0]
					})
				}
				wg.Wait()
				close(ids)
				for id := range ids {
					testservices.MySQLExec(t, "KILL CONNECTION ?", id)
				}
				for i := range conns {
					want := int64(round*conns + i)
					rows, err := c.Query(context.Background(), "SELECT ?", []any{want})
					switch {
					case err != nil:
						failed++
						t.Logf("round %d call %d: %v", round, i, err)
					case len(rows.Values) != 1 || fmt.Sprint(rows.Values[0][0]) != fmt.Sprint(want):
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

// TestInFlightKillNotRetried: a statement whose connection is killed while
// it runs may have executed: it fails with "database unavailable" and is
// not run again (a second run would succeed).
func TestInFlightKillNotRetried(t *testing.T) {
	c := open(t, Config{MaxConns: 1})
	r, err := c.Query(context.Background(), "SELECT CONNECTION_ID()", nil)
	if err != nil {
		t.Fatal(err)
	}
	id := r.Values[0][0]
	errc := make(chan error, 1)
	go func() {
		_, err := c.Query(context.Background(), "SELECT SLEEP(3)", nil)
		errc <- err
	}()
	db := testservices.MySQLDB(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE 'SELECT SLEEP%'", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the statement never showed as running")
		}
		time.Sleep(5 * time.Millisecond)
	}
	testservices.MySQLExec(t, "KILL CONNECTION ?", id)
	err = <-errc
	if err == nil {
		t.Fatal("the killed statement succeeded: it was run again")
	}
	var pub *pipeline.PublicError
	if !errors.As(err, &pub) || pub.Public != "database unavailable" {
		t.Errorf("error %v, want database unavailable", err)
	}
}
