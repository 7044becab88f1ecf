package sqlite_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/connectors/sqlite"
	"github.com/edgemcp/edgemcp/pipeline"
)

type raw = json.RawMessage

// open returns a connector, closed when the test ends.
func open(t testing.TB, cfg sqlite.Config) *sqlite.Connector {
	t.Helper()
	c, err := sqlite.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open(%+v): %v", cfg, err)
	}
	t.Cleanup(c.Close)
	return c
}

// newDB creates a database file in the test's temp dir by running setup
// statements on a read-write connector, and returns its path.
func newDB(t testing.TB, setup ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	c := open(t, sqlite.Config{Path: path})
	for _, s := range setup {
		query(t, c, s)
	}
	c.Close()
	return path
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The shared connector assertions, under the names these tests use.
var (
	query = func(t testing.TB, c *sqlite.Connector, sql string, args ...any) *pipeline.Rows {
		return conntest.Query(t, c, sql, args...)
	}
	scalar = func(t testing.TB, c *sqlite.Connector, sql string, args ...any) any {
		return conntest.Scalar(t, c, sql, args...)
	}
	publicErr = conntest.PublicErr
	sameValue = conntest.SameValue
)
