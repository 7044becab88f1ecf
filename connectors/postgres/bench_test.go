package postgres_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
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

	for _, bc := range []struct {
		name     string
		readOnly bool
	}{{"plain", false}, {"read_only", true}} {
		b.Run(bc.name, func(b *testing.B) {
			c := open(b, postgres.Config{ReadOnly: bc.readOnly, MaxConns: 4})
			ctx := context.Background()
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
}
