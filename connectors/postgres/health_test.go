package postgres_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

// A server that accepts connections but never answers (hung, or a
// half-done failover) fails Ping and Query within the connect timeout
// instead of holding the call.
func TestConnectTimeoutOnSilentServer(t *testing.T) {
	defer postgres.SetDefaultConnectTimeout(300 * time.Millisecond)()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	c := open(t, postgres.Config{DSN: fmt.Sprintf("postgres://u@%s/db?sslmode=disable", l.Addr())})
	// The callers' own deadline is far: only the connect timeout can
	// end these calls in time.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for name, run := range map[string]func() error{
		"Ping":  func() error { return c.Ping(ctx) },
		"Query": func() error { _, err := c.Query(ctx, "SELECT 1", nil); return err },
	} {
		start := time.Now()
		err := run()
		if publicErr(t, err).Public != "database unavailable" || time.Since(start) > 3*time.Second {
			t.Errorf("%s on a silent server: %v after %s", name, err, time.Since(start))
		}
	}
}

// Ping and MaxConns, which connector guards use, on the real database.
func TestPingAndMaxConns(t *testing.T) {
	c := open(t, postgres.Config{DSN: testservices.PostgresURL(t), MaxConns: 3})
	if err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := c.MaxConns(); n != 3 {
		t.Errorf("MaxConns = %d, want 3", n)
	}
}
