package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// How the DB tool's cost grows with load. -scenario scale: requests/s and
// p99 from 1 to 256 closed-loop clients (each sends its next call when the
// last is answered) on a pool of 32 connections. -scenario overload:
// calls arriving at twice the measured capacity whatever the answers
// (open loop, latency counted from the planned arrival, so a queue shows
// as latency), with the gateway as configured by default, with the pool's
// wait bounded (max_waiting, queue_timeout), with the tool's
// max_concurrent, and with the endpoint's max_concurrent. Both run in the pinned layout where it runs (layout.go):
// at twice the capacity, a driver in the gateway's process would take the
// CPU the gateway is overloaded on.

const scalePoolConns = 32

func loadScaleGateway(port int, dsn, endpointExtra, connectorExtra, toolExtra string) string {
	return loadSite(port, fmt.Sprintf(`	mcp /mcp {
		%s
		connector main postgres %s {
			max_conns %d
			%s
		}
%s	}`, endpointExtra, dsn, scalePoolConns, connectorExtra, getUserTool(toolExtra))) + "/mcp"
}

func openSessions(ctx context.Context, url, version string, n int) []*session {
	out := make([]*session, n)
	for i := range out {
		s, err := openSession(ctx, url, version)
		check(err)
		out[i] = s
	}
	return out
}

func runScaleBench(ctx context.Context, dsn string, d time.Duration, rows int, version string) {
	url := loadScaleGateway(freePort(), dsn, "", "", "")
	defer caddy.Stop()
	sessions := openSessions(ctx, url, version, 256)
	fmt.Printf("edgemcp scale bench: DB tool, pool of %d connections, %s per step, %d rows, %s, %s\n", scalePoolConns, d, rows, layoutName(), loadAverage())
	fmt.Printf("%8s %10s %10s %10s %10s %8s\n", "clients", "req/s", "p50", "p99", "max", "errors")
	for n := 1; n <= 256; n *= 2 {
		st := drive(n, d, func(r *rand.Rand) error {
			return sessions[r.IntN(n)].callGetUser(ctx, r.Int64N(int64(rows))+1)
		})
		fmt.Printf("%8d %10.0f %10s %10s %10s %8d\n", n, st.rps(), st.pct(0.5).Round(time.Microsecond),
			st.pct(0.99).Round(time.Microsecond), st.max().Round(time.Microsecond), st.errors)
	}
}

// overloadCap bounds the calls the driver keeps in flight: beyond it an
// arrival is dropped by the client (counted), so an unbounded queue in the
// gateway cannot take the machine down with it.
const overloadCap = 4096

func runOverloadBench(ctx context.Context, dsn string, d time.Duration, rows int, version string) {
	port := freePort()
	url := loadScaleGateway(port, dsn, "", "", "")
	defer caddy.Stop()
	sessions := openSessions(ctx, url, version, 64)
	capacity := drive(scalePoolConns, d, func(r *rand.Rand) error {
		return sessions[r.IntN(len(sessions))].callGetUser(ctx, r.Int64N(int64(rows))+1)
	}).rps()
	rate := 2 * capacity
	fmt.Printf("edgemcp overload bench: DB tool, pool of %d connections; capacity %.0f req/s (32 closed-loop clients); arrivals at %.0f/s for %s; %s; %s\n",
		scalePoolConns, capacity, rate, d, layoutName(), loadAverage())
	for _, c := range []struct{ name, endpoint, conn, tool string }{
		{"default (pool wait unbounded, queue_timeout 10s)", "", "", ""},
		{"max_waiting 32, queue_timeout 100ms", "", "max_waiting 32\n\t\t\tqueue_timeout 100ms", ""},
		{"tool max_concurrent 32", "", "", "max_concurrent 32"},
		{"endpoint max_concurrent 64 (503 before the body is read)", "max_concurrent 64", "", ""},
	} {
		url := loadScaleGateway(port, dsn, c.endpoint, c.conn, c.tool)
		transport.CloseIdleConnections() // the reload closed them
		sessions := openSessions(ctx, url, version, 64)
		openLoop(ctx, sessions, rate, d, rows).print(c.name)
	}
}

type overloadStats struct {
	ok, busy, other  []time.Duration
	dropped, maxBusy int64
	firstOther       string
	elapsed          time.Duration
}

func (o *overloadStats) print(name string) {
	fmt.Printf("%s:\n", name)
	line := func(what string, lat []time.Duration) {
		slices.Sort(lat)
		s := &stats{lat: lat, elapsed: o.elapsed}
		fmt.Printf("  %-16s %7d (%6.0f/s)  p50 %-10s p99 %-10s max %s\n", what, len(lat), s.rps(),
			s.pct(0.5).Round(time.Microsecond), s.pct(0.99).Round(time.Microsecond), s.max().Round(time.Microsecond))
	}
	line("answered", o.ok)
	line("busy", o.busy)
	line("other failures", o.other)
	fmt.Printf("  most in flight %d; dropped by the driver (over %d in flight) %d\n", o.maxBusy, overloadCap, o.dropped)
	if o.firstOther != "" {
		fmt.Printf("  first other failure: %.160s\n", o.firstOther)
	}
}

// openLoop sends calls at rate per second for d, each at its planned time
// whatever the answers, and sorts the answers by kind.
func openLoop(ctx context.Context, sessions []*session, rate float64, d time.Duration, rows int) *overloadStats {
	o := &overloadStats{elapsed: d}
	var mu sync.Mutex
	var inFlight atomic.Int64
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) / rate)
	r := rand.New(rand.NewPCG(7, 42))
	start := time.Now()
	for i := 0; ; i++ {
		planned := start.Add(time.Duration(i) * interval)
		if planned.Sub(start) >= d {
			break
		}
		if wait := time.Until(planned); wait > time.Millisecond {
			time.Sleep(wait)
		}
		if inFlight.Load() >= overloadCap {
			o.dropped++
			continue
		}
		n := inFlight.Add(1)
		o.maxBusy = max(o.maxBusy, n)
		s, id := sessions[i%len(sessions)], r.Int64N(int64(rows))+1
		wg.Go(func() {
			defer inFlight.Add(-1)
			err := s.callGetUser(ctx, id)
			lat := time.Since(planned)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				o.ok = append(o.ok, lat)
			case strings.Contains(err.Error(), "busy"):
				o.busy = append(o.busy, lat)
			default:
				if o.firstOther == "" {
					o.firstOther = err.Error()
				}
				o.other = append(o.other, lat)
			}
		})
	}
	wg.Wait()
	return o
}
