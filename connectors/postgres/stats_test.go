package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/postgres"
)

// TestPoolStats: with one connection, a statement started while another
// runs waits for it, and the pool reports the wait.
func TestPoolStats(t *testing.T) {
	c := open(t, postgres.Config{MaxConns: 1})
	if s := c.PoolStats(); s.Max != 1 || s.InUse != 0 || s.Waits != 0 {
		t.Fatalf("fresh pool: %+v", s)
	}
	done := make(chan error, 2)
	run := func() {
		_, err := c.Query(context.Background(), "SELECT pg_sleep(0.3)", nil)
		done <- err
	}
	go run()
	deadline := time.Now().Add(5 * time.Second)
	for c.PoolStats().InUse != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the first statement never took the connection: %+v", c.PoolStats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	go run()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	s := c.PoolStats()
	if s.Waits < 1 || s.WaitTime <= 0 || s.Open != 1 || s.Idle != 1 || s.InUse != 0 {
		t.Fatalf("after a contended acquire: %+v", s)
	}
}
