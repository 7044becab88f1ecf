package mysql

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// open opens a connector on the test server, closed when the test ends.
func open(t testing.TB, cfg Config) *Connector {
	t.Helper()
	if cfg.DSN == "" {
		cfg.DSN = testservices.MySQLDSN(t)
	}
	c, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// isMariaDB reports the flavour of the test server.
func isMariaDB(t *testing.T, c *Connector) bool {
	t.Helper()
	v, err := c.Query(ctxTimeout(t, 10*time.Second), "SELECT VERSION()", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := v.Values[0][0].(string)
	return strings.Contains(s, "MariaDB")
}
