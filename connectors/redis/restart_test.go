package redis

import (
	"context"
	"fmt"
	"testing"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestRecoversAfterRestart: a private redis-server (never the shared one)
// is stopped and started under a read-write connector (no go-redis
// retries) whose pool holds idle connections: "database unavailable"
// while it is down, right answers again soon after (conntest.Restart).
func TestRecoversAfterRestart(t *testing.T) {
	srv := testservices.StartRedis(t)
	const conns = 4
	c := open(t, Config{URL: srv.URL, MaxConns: conns})
	conntest.Restart(t, srv, conns, func(i int) error {
		v, err := c.Do(context.Background(), []string{"ECHO", fmt.Sprint(i)})
		if err == nil && v != fmt.Sprint(i) {
			t.Errorf("call %d: got %v", i, v)
		}
		return err
	})
}
