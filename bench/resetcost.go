package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

// -scenario reset: what Postgres spends per call on the DB tool's query,
// alone and with each way of resetting the session after it, one call at
// a time on one connection, so that each figure is one backend's CPU time
// (/proc/<pid>/schedstat, in nanoseconds). A private Postgres runs on one
// CPU and this process on another, as in the pinned layout; the sides run
// in alternating rounds, and each figure is the median round.
//
// The sides: the query through pgx alone (the floor); followed, in the
// same pipeline, by the reset the connector sends today and by each of its
// statements alone (what each costs); followed by the whole reset as one
// simple-protocol query, a round trip of its own; and through the
// connector, plain and read_only, without and with reset proofs
// (connectors/postgres, proofs.go), which also shows the connector's CPU
// per call in this process.

const resetRounds = 15

func runResetBench(ctx context.Context, n int) {
	cpus, err := twoCPUs()
	check(err)
	pg, err := testservices.RunPostgres([]string{"taskset", "-c", strconv.Itoa(cpus[0])})
	check(err)
	onExit(pg.Close)
	restore, err := pinThisProcess(cpus[1])
	check(err)
	onExit(restore)
	db, err := pgxpool.New(ctx, pg.URL)
	check(err)
	check(setup(ctx, db, 10000))
	db.Close()

	type side struct {
		name     string
		call     func() error
		pid      int32
		pg, self []float64 // per round: µs per call
	}
	var sides []*side
	conn, err := pgx.Connect(ctx, pg.URL)
	check(err)
	pid := int32(conn.PgConn().PID())
	id := func() int64 { return rand.Int64N(10000) + 1 }
	pipelined := func(reset ...string) func() error {
		return func() error {
			b := &pgx.Batch{}
			b.Queue(query, id())
			for _, q := range reset {
				b.Queue(q)
			}
			return conn.SendBatch(ctx, b).Close()
		}
	}
	reset := []string{"RESET ALL", "RESET ROLE", "SELECT pg_advisory_unlock_all()", "UNLISTEN *", "DISCARD TEMP", "DISCARD SEQUENCES"}
	sides = append(sides, &side{name: "pgx alone", pid: pid, call: pipelined()},
		&side{name: "+ reset, pipelined", pid: pid, call: pipelined(reset...)})
	for _, q := range reset {
		sides = append(sides, &side{name: "+ " + q, pid: pid, call: pipelined(q)})
	}
	sides = append(sides, &side{name: "+ reset, simple query", pid: pid, call: func() error {
		if err := pipelined()(); err != nil {
			return err
		}
		_, err := conn.PgConn().Exec(ctx, strings.Join(reset, "; ")).ReadAll()
		return err
	}})
	for _, v := range []struct {
		name       string
		ro, proofs bool
	}{{"connector", false, false}, {"connector, proofs", false, true}, {"read_only", true, false}, {"read_only, proofs", true, true}} {
		c, err := postgres.Open(ctx, postgres.Config{DSN: pg.URL, MaxConns: 1, ReadOnly: v.ro})
		check(err)
		onExit(c.Close)
		if v.proofs {
			c.EnableResetProofs(time.Hour)
		}
		rows, err := c.Query(ctx, "SELECT pg_backend_pid()", nil)
		check(err)
		for range 2 { // the first call proves the statement, after it
			_, err = c.Query(ctx, query, []any{int64(1)})
			check(err)
		}
		sides = append(sides, &side{name: v.name, pid: int32(rows.Values[0][0].(int64)), call: func() error {
			_, err := c.Query(ctx, query, []any{id()})
			return err
		}})
	}

	fmt.Printf("edgemcp reset bench: the DB tool's query, one connection, %d rounds of %d calls per side, Postgres on CPU %d, this process on CPU %d, %s\n",
		resetRounds, n, cpus[0], cpus[1], loadAverage())
	for range resetRounds {
		for _, s := range sides {
			for range n / 20 { // warm
				check(s.call())
			}
			pg0, self0 := backendCPU(s.pid), processSample().cpu
			for range n {
				check(s.call())
			}
			s.pg = append(s.pg, perCall(backendCPU(s.pid)-pg0, n))
			s.self = append(s.self, perCall(processSample().cpu-self0, n))
		}
	}
	median := func(v []float64) float64 { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
	floor := median(sides[0].pg)
	fmt.Printf("%-34s %22s %18s\n", "", "Postgres µs/call", "client µs/call")
	for _, s := range sides {
		fmt.Printf("%-34s %8.1f (%+5.1f) %8s %14.1f\n", s.name, median(s.pg), median(s.pg)-floor, "", median(s.self))
	}
}

// backendCPU is the CPU time of process pid so far.
func backendCPU(pid int32) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(int(pid)) + "/schedstat")
	check(err)
	ns, err := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
	check(err)
	return time.Duration(ns)
}
