package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

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

func query(t testing.TB, c *sqlite.Connector, sql string, args ...any) *pipeline.Rows {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := c.Query(ctx, sql, args)
	if err != nil {
		t.Fatalf("Query(%q): %v", sql, err)
	}
	return rows
}

func scalar(t testing.TB, c *sqlite.Connector, sql string, args ...any) any {
	t.Helper()
	rows := query(t, c, sql, args...)
	if len(rows.Values) != 1 || len(rows.Values[0]) != 1 {
		t.Fatalf("Query(%q): want one value, got %#v", sql, rows.Values)
	}
	return rows.Values[0][0]
}

func publicErr(t testing.TB, err error) *pipeline.PublicError {
	t.Helper()
	if err == nil {
		t.Fatal("want an error, got nil")
	}
	var pe *pipeline.PublicError
	if !errors.As(err, &pe) {
		t.Fatalf("want *pipeline.PublicError, got %T: %v", err, err)
	}
	return pe
}

func sameValue(t testing.TB, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: got %#v, want %#v", what, got, want)
		return
	}
	gj, err := json.Marshal(got)
	if err != nil {
		t.Errorf("%s: %#v does not encode to JSON: %v", what, got, err)
		return
	}
	if wj, _ := json.Marshal(want); string(gj) != string(wj) {
		t.Errorf("%s: JSON %s, want %s", what, gj, wj)
	}
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
