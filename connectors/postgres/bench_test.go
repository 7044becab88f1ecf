package postgres_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
)

// BenchmarkQuery: a point lookup by random primary key on a 10k-row table,
// the typical DB-backed tool, end to end through Query (pool acquire,
// execute, normalize). Run by hand:
//
//	go test ./connectors/postgres -run '^$' -bench BenchmarkQuery -benchtime=2s
func BenchmarkQuery(b *testing.B) {
	const n = 10_000
	admin := testservices.PostgresConn(b)
	s := testservices.PostgresSchema(b, admin)
	table := s + ".users"
	testservices.PostgresExec(b, admin, `CREATE TABLE `+table+` (
		id int8 PRIMARY KEY, name text NOT NULL, email text NOT NULL,
		score numeric(10,2), created timestamptz NOT NULL)`)
	testservices.PostgresExec(b, admin, `INSERT INTO `+table+`
		SELECT i, 'user ' || i, 'user' || i || '@example.com', i / 7.0, now() - i * interval '1 minute'
		FROM generate_series(1, $1::int8) i`, n)
	testservices.PostgresExec(b, admin, "ANALYZE "+table)
	sql := "SELECT id, name, email, score, created FROM " + table + " WHERE id = $1"

	// read_only+claims_setting hands the caller's claims to the session
	// (set_config in the statement's transaction, same round trip).
	for _, bc := range []struct {
		name     string
		readOnly bool
		claims   string
	}{{"plain", false, ""}, {"read_only", true, ""}, {"read_only+claims_setting", true, "request.jwt.claims"}} {
		b.Run(bc.name, func(b *testing.B) {
			c := open(b, postgres.Config{ReadOnly: bc.readOnly, MaxConns: 4, ClaimsSetting: bc.claims})
			ctx := pipeline.WithCaller(context.Background(), &pipeline.Identity{
				Subject: "alice", Claims: map[string]any{"tenant": "acme", "scope": "mcp:use docs:read", "roles": []any{"reader"}},
			})
			args := []any{int64(0)}
			for b.Loop() {
				args[0] = rand.Int64N(n) + 1
				rows, err := c.Query(ctx, sql, args)
				if err != nil {
					b.Fatal(err)
				}
				if len(rows.Values) != 1 {
					b.Fatalf("got %d rows", len(rows.Values))
				}
			}
		})
	}
	// 100 rows per call: the per-row cost of collecting (and of counting
	// the result's size for max_result_size) shows here, not in a point
	// lookup.
	b.Run("plain_100_rows", func(b *testing.B) {
		c := open(b, postgres.Config{MaxConns: 4})
		ctx := context.Background()
		q := "SELECT id, name, email, score, created FROM " + table + " WHERE id BETWEEN $1 AND $1 + 99"
		args := []any{int64(0)}
		for b.Loop() {
			args[0] = rand.Int64N(n-100) + 1
			rows, err := c.Query(ctx, q, args)
			if err != nil {
				b.Fatal(err)
			}
			if len(rows.Values) != 100 {
				b.Fatalf("got %d rows", len(rows.Values))
			}
		}
	})
}
