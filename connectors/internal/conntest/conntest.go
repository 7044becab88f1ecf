// Package conntest holds the assertions every connector's tests share.
package conntest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Querier is a connector as its tests call it.
type Querier interface {
	Query(ctx context.Context, sql string, args []any) (*pipeline.Rows, error)
}

// Query runs sql with a generous deadline and fails the test on error.
func Query(t testing.TB, c Querier, sql string, args ...any) *pipeline.Rows {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := c.Query(ctx, sql, args)
	if err != nil {
		t.Fatalf("Query(%q): %v", sql, err)
	}
	return rows
}

// Scalar runs sql and returns the single value of its single row.
func Scalar(t testing.TB, c Querier, sql string, args ...any) any {
	t.Helper()
	rows := Query(t, c, sql, args...)
	if len(rows.Values) != 1 || len(rows.Values[0]) != 1 {
		t.Fatalf("Query(%q): want one value, got %#v", sql, rows.Values)
	}
	return rows.Values[0][0]
}

// PublicErr asserts err is a *pipeline.PublicError and returns it.
func PublicErr(t testing.TB, err error) *pipeline.PublicError {
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

// SameValue compares normalized values, and their JSON encodings (what the
// caller finally sees).
func SameValue(t testing.TB, what string, got, want any) {
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

// ResultSize checks a connector opened with max_result_size max: q with
// the arguments under returns a result that counts max bytes exactly,
// with over one that counts more and fails with the refusal, which names
// the limit and no value; then the connector answers the next statement.
func ResultSize(t testing.TB, c Querier, max int64, q string, under, over []any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Query(ctx, q, under); err != nil {
		t.Fatalf("Query(%q, %v) at max_result_size: %v", q, under, err)
	}
	_, err := c.Query(ctx, q, over)
	want := "the result is larger than " + pipeline.SizeText(max) + " (max_result_size); narrow the statement (fewer rows, columns or elements) or raise max_result_size"
	if pe := PublicErr(t, err); pe.Public != want {
		t.Errorf("Query(%q, %v) over max_result_size: %q, want %q", q, over, pe.Public, want)
	}
	SameValue(t, "the statement after the refusal", Scalar(t, c, "SELECT 1"), int64(1))
}
