package postgres_test

import (
	"context"
	"testing"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestRecoversAfterRestart: a private PostgreSQL (never the shared one)
// is stopped (fast shutdown) and started under a connector whose pool is
// full of idle connections: "database unavailable" while it is down,
// right answers again soon after (conntest.Restart).
func TestRecoversAfterRestart(t *testing.T) {
	srv := testservices.StartPostgres(t)
	const conns = 4
	c := open(t, postgres.Config{DSN: srv.URL, MaxConns: conns})
	conntest.Restart(t, srv, conns, func(i int) error {
		rows, err := c.Query(context.Background(), "SELECT $1::int8", []any{int64(i)})
		if err == nil && rows.Values[0][0] != int64(i) {
			t.Errorf("call %d: got %v", i, rows.Values)
		}
		return err
	})
}
