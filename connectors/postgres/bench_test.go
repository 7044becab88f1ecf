package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
)

// BenchmarkQuery: a point lookup by random primary key on a 10k-row table,
// the typical DB-backed tool, end to end through Query (pool acquire,
// execute, normalize), and the same query through pgx alone (pgx): the
// floor. Each reports what Postgres spent per call (pg-µs/op: the CPU
// time of the pool's backends, from /proc, when the server runs on this
// machine), which the session reset and the reset proofs (+proofs) change,
// and this process's CPU per call (client-µs/op: pgx and the connector).
// Run by hand:
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
	b.Run("pgx", func(b *testing.B) {
		cfg, err := pgxpool.ParseConfig(testservices.PostgresURL(b))
		if err != nil {
			b.Fatal(err)
		}
		cfg.MaxConns = 4
		cfg.ConnConfig.RuntimeParams["application_name"] = "edgemcp-bench-pgx"
		pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer pool.Close()
		ctx := context.Background()
		var (
			id          int64
			name, email string
			score       pgtype.Numeric
			created     time.Time
		)
		if err := pool.QueryRow(ctx, sql, 1).Scan(&id, &name, &email, &score, &created); err != nil {
			b.Fatal(err)
		}
		defer postgresCPU(b, admin, "edgemcp-bench-pgx")()
		for b.Loop() {
			if err := pool.QueryRow(ctx, sql, rand.Int64N(n)+1).Scan(&id, &name, &email, &score, &created); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, bc := range []struct {
		name     string
		readOnly bool
		claims   string
		proofs   bool
	}{{"plain", false, "", false}, {"plain+proofs", false, "", true}, {"read_only", true, "", false}, {"read_only+proofs", true, "", true},
		{"read_only+claims_setting", true, "request.jwt.claims", false}, {"read_only+claims_setting+proofs", true, "request.jwt.claims", true}} {
		b.Run(bc.name, func(b *testing.B) {
			c := open(b, postgres.Config{ReadOnly: bc.readOnly, MaxConns: 4, ClaimsSetting: bc.claims})
			if bc.proofs {
				c.EnableResetProofs(time.Hour)
			}
			ctx := pipeline.WithCaller(context.Background(), &pipeline.Identity{
				Subject: "alice", Claims: map[string]any{"tenant": "acme", "scope": "mcp:use docs:read", "roles": []any{"reader"}},
			})
			args := []any{int64(0)}
			// The first call proves the statement (+proofs): outside the loop.
			if _, err := c.Query(ctx, sql, []any{int64(1)}); err != nil {
				b.Fatal(err)
			}
			c.WaitProofs()
			defer postgresCPU(b, admin, "edgemcp")()
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

// postgresCPU starts counting the CPU time of the backends of application
// app on the test database, and of this process; the function it returns
// reports them per loop iteration as pg-µs/op and client-µs/op. Postgres's
// is not reported when the backends' /proc entries cannot be read (a
// server on another machine).
func postgresCPU(b *testing.B, admin *pgx.Conn, app string) func() {
	b.Helper()
	sample := func() map[int32]time.Duration {
		rows, err := admin.Query(context.Background(),
			"SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1", app)
		if err != nil {
			b.Fatal(err)
		}
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			b.Fatal(err)
		}
		cpu := make(map[int32]time.Duration, len(pids))
		for _, pid := range pids {
			// schedstat: nanoseconds on a CPU, then wait time and slices.
			s, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
			if err != nil {
				return nil
			}
			ns, _ := strconv.ParseInt(strings.Fields(string(s))[0], 10, 64)
			cpu[pid] = time.Duration(ns)
		}
		return cpu
	}
	start, client := sample(), processCPU()
	return func() {
		end := sample()
		if b.N == 0 {
			return
		}
		b.ReportMetric(float64((processCPU()-client).Microseconds())/float64(b.N), "client-µs/op")
		if start == nil || len(end) == 0 {
			return
		}
		var spent time.Duration
		for pid, ns := range end { // a backend opened during the loop counts from 0
			spent += ns - start[pid]
		}
		b.ReportMetric(float64(spent.Microseconds())/float64(b.N), "pg-µs/op")
	}
}

// processCPU is this process's CPU time, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
