package mysql

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// BenchmarkQuery: a point lookup by random primary key on a 10k-row table,
// through Query (pool, cached prepared statement, normalize), plain and
// read-only (START TRANSACTION READ ONLY ... COMMIT). Run by hand:
//
//	go test ./connectors/mysql -run '^$' -bench BenchmarkQuery -benchtime=2s
func BenchmarkQuery(b *testing.B) {
	const n = 10_000
	tbl := testservices.MySQLTable(b, "bench")
	testservices.MySQLExec(b, `CREATE TABLE `+tbl+` (id BIGINT PRIMARY KEY, name VARCHAR(50) NOT NULL,
		email VARCHAR(80) NOT NULL, score DECIMAL(10,2), created DATETIME(6) NOT NULL)`)
	// 10^4 ids from four digit tables (recursive CTEs are capped at 1000
	// iterations by default on MariaDB).
	digits := "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"
	testservices.MySQLExec(b, `INSERT INTO `+tbl+` SELECT i, CONCAT('user ', i), CONCAT('user', i, '@example.com'), i / 7, NOW(6) - INTERVAL i MINUTE
		FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 1 AS i FROM `+digits+` a, `+digits+` b, `+digits+` c, `+digits+` e) s`)
	q := "SELECT id, name, email, score, created FROM " + tbl + " WHERE id = ?"
	// Baseline: database/sql on go-sql-driver alone, which prepares,
	// executes and closes the statement on every call.
	b.Run("driver_only", func(b *testing.B) {
		db := testservices.MySQLDB(b)
		ctx := context.Background()
		var id int64
		var name, email, score, created string
		for b.Loop() {
			if err := db.QueryRowContext(ctx, q, rand.Int64N(n)+1).Scan(&id, &name, &email, &score, &created); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, bc := range []struct {
		name     string
		readOnly bool
	}{{"plain", false}, {"read_only", true}} {
		b.Run(bc.name, func(b *testing.B) {
			c := open(b, Config{ReadOnly: bc.readOnly, MaxConns: 4})
			ctx := context.Background()
			args := []any{int64(0)}
			for b.Loop() {
				args[0] = rand.Int64N(n) + 1
				rows, err := c.Query(ctx, q, args)
				if err != nil {
					b.Fatal(err)
				}
				if len(rows.Values) != 1 {
					b.Fatalf("got %d rows", len(rows.Values))
				}
			}
		})
	}
	// A statement that names a user variable: its connection is closed
	// after the call (session.go), so every call opens and sets up a new
	// one. The price of a session-changing tool, paid by it alone.
	b.Run("session_changing", func(b *testing.B) {
		c := open(b, Config{MaxConns: 4})
		ctx := context.Background()
		q := "SELECT id, @edgemcp_bench := name AS name FROM " + tbl + " WHERE id = ?"
		for b.Loop() {
			if _, err := c.Query(ctx, q, []any{rand.Int64N(n) + 1}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// 100 rows per call: the per-row cost of collecting (and of counting
	// the result's size for max_result_size) shows here, not in a point
	// lookup.
	b.Run("plain_100_rows", func(b *testing.B) {
		c := open(b, Config{MaxConns: 4})
		ctx := context.Background()
		q := "SELECT id, name, email, score, created FROM " + tbl + " WHERE id BETWEEN ? AND ? + 99"
		for b.Loop() {
			id := rand.Int64N(n-100) + 1
			rows, err := c.Query(ctx, q, []any{id, id})
			if err != nil {
				b.Fatal(err)
			}
			if len(rows.Values) != 100 {
				b.Fatalf("got %d rows", len(rows.Values))
			}
		}
	})
}
