package sqlite_test

import (
	"testing"

	"github.com/edgemcp/edgemcp/connectors/sqlite"
)

// TestPoolStats: the database/sql pool as the metrics see it.
func TestPoolStats(t *testing.T) {
	c := open(t, sqlite.Config{Path: newDB(t, "CREATE TABLE t (x int)"), MaxConns: 2})
	query(t, c, "SELECT x FROM t")
	if s := c.PoolStats(); s.Max != 2 || s.Open < 1 || s.InUse != 0 || s.Idle != s.Open {
		t.Fatalf("pool after one statement: %+v", s)
	}
}
