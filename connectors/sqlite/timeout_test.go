package sqlite_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/sqlite"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// slowSQL counts to a billion: seconds of pure CPU inside SQLite.
const slowSQL = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000000)
SELECT count(*) FROM n`

func TestStatementTimeout(t *testing.T) {
	c := open(t, sqlite.Config{Path: newDB(t), StatementTimeout: 100 * time.Millisecond})
	start := time.Now()
	_, err := c.Query(context.Background(), slowSQL, nil)
	if pe := publicErr(t, err); pe.Public != "statement timed out" {
		t.Errorf("public %q, want %q", pe.Public, "statement timed out")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v with a 100ms timeout", d)
	}
	sameValue(t, "after timeout", scalar(t, c, "SELECT 1"), int64(1))
}

func TestCancelAndDeadline(t *testing.T) {
	c := open(t, sqlite.Config{Path: newDB(t)})
	cases := []struct {
		name   string
		ctx    func() (context.Context, context.CancelFunc)
		public string
	}{
		{"canceled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			return ctx, cancel
		}, "canceled"},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}, "timed out"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := tc.ctx()
			defer cancel()
			start := time.Now()
			_, err := c.Query(ctx, slowSQL, nil)
			if pe := publicErr(t, err); pe.Public != tc.public {
				t.Errorf("public %q, want %q", pe.Public, tc.public)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestErrorsAndShape: SQLite's message reaches the caller without the
// database path; the connector reports its dialect and pool bound.
func TestErrorsAndShape(t *testing.T) {
	path := newDB(t)
	c := open(t, sqlite.Config{Path: path, MaxConns: 3})
	_, err := c.Query(context.Background(), "SELECT * FROM nope", nil)
	pe := publicErr(t, err)
	if !strings.Contains(pe.Public, "no such table: nope") || strings.Contains(pe.Public, path) {
		t.Errorf("public %q", pe.Public)
	}
	if pe.Code != "SQLITE_ERROR" {
		t.Errorf("code %q, want SQLITE_ERROR", pe.Code)
	}
	// An extended result code the driver has no name for: the primary
	// code's name and the number.
	w := open(t, sqlite.Config{Path: newDB(t, "CREATE TABLE u (email TEXT PRIMARY KEY)", "INSERT INTO u VALUES ('a@example.com')")})
	_, err = w.Query(context.Background(), "INSERT INTO u VALUES (?)", []any{"a@example.com"})
	if pe := publicErr(t, err); pe.Code != "SQLITE_CONSTRAINT, extended code 1555" { // SQLITE_CONSTRAINT_PRIMARYKEY
		t.Errorf("unique violation: code %q (public %q)", pe.Code, pe.Public)
	}
	if c.Dialect() != sqltemplate.SQLite {
		t.Errorf("Dialect() = %v", c.Dialect())
	}
	if n := c.DB().Stats().MaxOpenConnections; n != 3 {
		t.Errorf("MaxOpenConnections = %d, want 3", n)
	}
}
