package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/internal/testpg"
	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/pipeline"
)

// open returns a connector on the test database, closed when the test ends.
func open(t testing.TB, cfg postgres.Config) *postgres.Connector {
	t.Helper()
	if cfg.DSN == "" {
		cfg.DSN = testpg.URL(t)
	}
	c, err := postgres.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// query runs sql with a generous deadline and fails the test on error.
func query(t testing.TB, c *postgres.Connector, sql string, args ...any) *pipeline.Rows {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := c.Query(ctx, sql, args)
	if err != nil {
		t.Fatalf("Query(%q): %v", sql, err)
	}
	return rows
}

// scalar runs sql and returns the single value of its single row.
func scalar(t testing.TB, c *postgres.Connector, sql string, args ...any) any {
	t.Helper()
	rows := query(t, c, sql, args...)
	if len(rows.Values) != 1 || len(rows.Values[0]) != 1 {
		t.Fatalf("Query(%q): want one value, got %#v", sql, rows.Values)
	}
	return rows.Values[0][0]
}

// publicErr asserts err is a *pipeline.PublicError and returns it.
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

// sameValue compares normalized values, and their JSON encodings (what the
// caller finally sees).
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
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Errorf("%s: JSON %s, want %s", what, gj, wj)
	}
}
