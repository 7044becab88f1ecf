package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/edgemcp/edgemcp/connectors/sqlite"
)

// TestSessionNotShared: on a one-connection read-write pool, a PRAGMA, a
// temporary table, an ATTACH or an unfinished BEGIN left by one call is
// not there for the next.
func TestSessionNotShared(t *testing.T) {
	dir := t.TempDir()
	c := open(t, sqlite.Config{Path: newDB(t, "CREATE TABLE t (a TEXT)"), MaxConns: 1})
	ctx := context.Background()
	run := func(sql string) {
		t.Helper()
		if _, err := c.Query(ctx, sql, nil); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}

	run("PRAGMA case_sensitive_like = 1")
	if v := scalar(t, c, "SELECT 'a' LIKE 'A'"); v != int64(1) {
		t.Errorf("case_sensitive_like set by the previous call still applies: 'a' LIKE 'A' = %v", v)
	}
	run("CREATE TEMP TABLE t (secret TEXT)") // shadows main.t
	if _, err := c.Query(ctx, "SELECT a FROM t", nil); err != nil {
		t.Errorf("the previous call's temporary table shadows main.t: %v", err)
	}
	run("ATTACH DATABASE '" + filepath.Join(dir, "other.db") + "' AS other")
	if v := scalar(t, c, "SELECT count(*) FROM pragma_database_list WHERE name = 'other'"); v != int64(0) {
		t.Errorf("database attached by the previous call still attached")
	}
	run("BEGIN")
	run("BEGIN") // not inside the previous caller's transaction

	// An ordinary statement keeps its connection (and its page cache).
	run("INSERT INTO t VALUES ('x')")
	if v := scalar(t, c, "SELECT count(*) FROM t"); v != int64(1) {
		t.Errorf("rows: %v", v)
	}
}
