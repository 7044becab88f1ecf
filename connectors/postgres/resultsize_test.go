package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestMaxResultSize: a value counts its wire bytes plus 16, so at 1000
// bytes one text value of 984 bytes passes and 985 fails, as do ten rows
// of 84 bytes and eleven; max_rows still applies; the one pooled
// connection serves every call (the refusal does not cost it).
func TestMaxResultSize(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("ro=%v", readOnly), func(t *testing.T) {
			c := open(t, postgres.Config{ReadOnly: readOnly, MaxConns: 1, MaxResultSize: 1000, MaxRows: 12})
			pid := scalar(t, c, "SELECT pg_backend_pid()")
			conntest.ResultSize(t, c, 1000, "SELECT repeat('x', $1::int) AS v", []any{int64(984)}, []any{int64(985)})
			conntest.ResultSize(t, c, 1000, "SELECT repeat('x', 84) AS v FROM generate_series(1, $1::int)", []any{int64(10)}, []any{int64(11)})
			_, err := c.Query(context.Background(), "SELECT 1 AS v FROM generate_series(1, 13)", nil)
			if pe := publicErr(t, err); pe.Public != "the statement returned more than 12 rows (max_rows); add a LIMIT or raise max_rows" {
				t.Errorf("over max_rows: %q", pe.Public)
			}
			if !readOnly {
				// A statement that cannot share the reset's pipeline
				// (reset.go) runs alone, and is refused the same way.
				_, err := c.Query(context.Background(), "SHOW ALL", nil)
				if pe := publicErr(t, err); pe.Public != tooLarge1000 {
					t.Errorf("SHOW ALL: %q", pe.Public)
				}
			}
			sameValue(t, "backend after the refusals", scalar(t, c, "SELECT pg_backend_pid()"), pid)
		})
	}
}

const tooLarge1000 = "the result is larger than 1000 bytes (max_result_size); narrow the statement (fewer rows, columns or elements) or raise max_result_size"

// TestOversizedResultStopsBackend: a statement that would send 100 GB
// fails at max_result_size (or max_rows) after its first rows: the server
// is told to stop (a cancel request) instead of the rest being read to
// drain it, which would take far longer than the call's 60 s deadline.
// The connection is kept.
func TestOversizedResultStopsBackend(t *testing.T) {
	admin, err := pgxpool.New(context.Background(), testservices.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, tc := range []struct {
		name string
		cfg  postgres.Config
		want string
	}{
		{"max_result_size", postgres.Config{MaxResultSize: 1 << 20}, "the result is larger than 1 MiB (max_result_size)"},
		{"max_rows", postgres.Config{MaxRows: 10}, "the statement returned more than 10 rows (max_rows)"},
		{"max_result_size read_only", postgres.Config{MaxResultSize: 1 << 20, ReadOnly: true}, "the result is larger than 1 MiB (max_result_size)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.MaxConns = 1
			c := open(t, tc.cfg)
			marker := testservices.Name("big_marker")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			_, err := c.Query(ctx, "SELECT repeat('x', 1000) AS v /* "+marker+" */ FROM generate_series(1, 10000) a, generate_series(1, 10000) b", nil)
			if pe := publicErr(t, err); len(pe.Public) < len(tc.want) || pe.Public[:len(tc.want)] != tc.want {
				t.Fatalf("error %q, want %q...", pe.Public, tc.want)
			}
			if ctx.Err() != nil {
				t.Fatal("the call ran into its deadline: the result was drained")
			}
			if !waitActive(t, admin, marker, false, 5*time.Second) {
				t.Errorf("backend still runs %q after the refusal", marker)
			}
			sameValue(t, "after the refusal", scalar(t, c, "SELECT 1"), int64(1))
			if n := c.Pool().Stat().NewConnsCount(); n != 1 {
				t.Errorf("%d connections created, want 1: the refused call's should be reused", n)
			}
		})
	}
}
