package mysql

import (
	"context"
	"fmt"
	"testing"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestRecoversAfterRestart: a private MariaDB (never the shared one) is
// stopped and started under a connector whose pool is full of idle
// connections: "database unavailable" while it is down, right answers
// again soon after (conntest.Restart).
func TestRecoversAfterRestart(t *testing.T) {
	srv := testservices.StartMariaDB(t)
	const conns = 4
	c := open(t, Config{DSN: srv.URL, MaxConns: conns})
	conntest.Restart(t, srv, conns, func(i int) error {
		rows, err := c.Query(context.Background(), "SELECT ?", []any{int64(i)})
		if err == nil && fmt.Sprint(rows.Values[0][0]) != fmt.Sprint(i) {
			t.Errorf("call %d: got %v", i, rows.Values)
		}
		return err
	})
}
