package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// The limits scenario (-scenario limits): every target of the performance
// issue measured in one run, as ratios to the limits the machine sets at
// that moment. One Caddy serves Caddy's respond with the very bytes of a
// DB tool answer, the DB tool on a plain and on a read_only connector, the
// same tool answering from the result cache, and a JavaScript handler; a
// pgx pool in the load driver runs the tool's query directly. In the
// pinned layout (layout.go, the default where it runs) the gateway and a
// private Postgres share one CPU and the driver has another, as in the
// issue's measurements; in the shared one all runs in this process. The
// combined limit is what a call would cost if the gateway added nothing
// to HTTP (respond) and the query (pgx): 1/(1/respond + 1/pgx). Each
// scenario runs limitRounds times, alternating, so all share the
// background load; req/s is the median of the rounds.

const limitRounds = 3

// limitCase is one measured scenario.
type limitCase struct {
	name string
	call func(*rand.Rand) error
	rps  []float64 // per round
	lat  stats
	cost cost
}

func (c *limitCase) median() float64 {
	r := slices.Clone(c.rps)
	slices.Sort(r)
	return r[len(r)/2]
}

func loadLimitsGateway(port int, dsn, scriptsDir string, clients int, body []byte) {
	respond := "respond 200"
	if body != nil {
		respond = "respond `" + string(body) + "` 200"
	}
	loadSite(port, fmt.Sprintf(`	route /respond {
		header Content-Type application/json
		%s
	}
	mcp /mcp {
		scripts_dir %s
		connector main postgres %s {
			max_conns %d
		}
		connector ro postgres %s {
			max_conns %d
			read_only
		}
%s		tool get-user-ro {
			description "Fetch a user by id, read only"
			use ro
			statement "SELECT id, name, email, created_at FROM edgemcp_bench.users WHERE id = {{ inputs.id }}"
			input id int required
		}
		tool get-user-cached {
			description "Fetch a user by id, cached"
			use main
			statement "SELECT id, name, email, created_at FROM edgemcp_bench.users WHERE id = {{ inputs.id }}"
			input id int required
			cache 1h
		}
		tool hello {
			description "Say hello"
			input name string default "world"
		}
	}`, respond, scriptsDir, dsn, clients, dsn, clients, getUserTool("")))
}

// limitsRig is the limits scenario ready to run: the gateway loaded, the
// sessions open, the pgx pool, the cases.
type limitsRig struct {
	body  []byte // the DB tool's answer, respond's body
	cases []*limitCase
	close func()
}

// startLimits loads the gateway (in the layout's process) and opens what
// the cases call.
func startLimits(ctx context.Context, dsn string, clients, rows, hot int, version string) *limitsRig {
	dir := writeScripts(map[string]string{"hello/handler.js": benchScripts["hello/handler.js"]})
	onExit(func() { _ = os.RemoveAll(dir) }) // also on Ctrl-C
	port := freePort()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)

	// respond answers with the bytes of a DB tool answer.
	loadLimitsGateway(port, dsn, dir, clients, nil)
	probe, err := openSession(ctx, base+"/mcp", version)
	check(err)
	body, _, err := probe.post(ctx, callBody(1, 1))
	check(err)
	body = bytes.TrimSpace(body)
	loadLimitsGateway(port, dsn, dir, clients, body)
	transport.CloseIdleConnections() // the reload closed them
	client := &http.Client{Transport: transport}
	got, err := postRespondBody(ctx, client, base+"/respond", callBody(1, 1))
	check(err)
	if !bytes.Equal(got, body) {
		fmt.Printf("warning: respond's body (%d bytes) differs from the tool's answer (%d bytes)\n", len(got), len(body))
	}

	pool := openPool(ctx, dsn, clients)
	sessions := make([]*session, clients)
	for i := range sessions {
		sessions[i], err = openSession(ctx, base+"/mcp", version)
		check(err)
	}
	anyID := func(r *rand.Rand) int64 { return r.Int64N(int64(rows)) + 1 }
	byID := func(tool string, id func(*rand.Rand) int64) func(*rand.Rand) error {
		return func(r *rand.Rand) error {
			return sessions[r.IntN(clients)].callTool(ctx, tool, fmt.Sprintf(`{"id":%d}`, id(r)))
		}
	}
	cases := []*limitCase{
		{name: "caddy respond", call: func(r *rand.Rand) error {
			return postRespond(ctx, client, base+"/respond", callBody(r.Int64(), anyID(r)))
		}},
		{name: "direct pgx loop", call: func(r *rand.Rand) error { return lookupUser(ctx, pool, anyID(r)) }},
		{name: "DB tool", call: byID("get-user", anyID)},
		{name: "DB tool read_only", call: byID("get-user-ro", anyID)},
		// drive's warm-up fills the cache with the hot keys.
		{name: "cache hit", call: byID("get-user-cached", func(r *rand.Rand) int64 { return r.Int64N(int64(hot)) + 1 })},
		{name: "JS handler", call: func(r *rand.Rand) error {
			return sessions[r.IntN(clients)].callTool(ctx, "hello", `{"name":"Ada"}`)
		}},
	}
	return &limitsRig{body: body, cases: cases, close: func() {
		pool.Close()
		if pinned == nil {
			_ = caddy.Stop()
		}
		transport.CloseIdleConnections()
		_ = os.RemoveAll(dir)
	}}
}

func runLimitsBench(ctx context.Context, dsn string, clients int, d time.Duration, rows, hot int, version, cpuProfile string) {
	rig := startLimits(ctx, dsn, clients, rows, hot, version)
	defer rig.close()
	cases, body := rig.cases, rig.body

	fmt.Printf("edgemcp limits bench: %d clients, %d rounds of %s per scenario, %d rows, %d hot keys, %d-byte answer, %s, %s\n",
		clients, limitRounds, d/limitRounds, rows, hot, len(body), layoutName(), loadAverage())
	for round := range limitRounds {
		for _, c := range cases {
			profile := round == 0 && cpuProfile != ""
			prefix := cpuProfile + "." + strings.ReplaceAll(c.name, " ", "-")
			if profile {
				gatewayProfile(prefix)
				gatewayAllocs(prefix + ".allocs-before")
			}
			st, cs := driveCost(clients, d/limitRounds, c.call)
			if profile {
				gatewayEndProfile()
				gatewayAllocs(prefix + ".allocs-after")
			}
			c.rps = append(c.rps, st.rps())
			c.lat.merge(st)
			c.cost.merge(cs)
		}
	}
	for _, c := range cases {
		fmt.Printf("%-20s %8.0f req/s  p50 %-9s p99 %-9s max %-9s errors %d  %s\n", c.name, c.median(),
			c.lat.pct(0.50).Round(time.Microsecond), c.lat.pct(0.99).Round(time.Microsecond),
			c.lat.max().Round(time.Microsecond), c.lat.errors, &c.cost)
	}
	respond, pgx, db, ro, hit, js := cases[0].median(), cases[1].median(), cases[2].median(), cases[3].median(), cases[4].median(), cases[5].median()
	combined := 1 / (1/respond + 1/pgx)
	fmt.Printf("combined limit 1/(1/respond + 1/pgx) = %.0f req/s\n", combined)
	ratio := func(name string, got, target float64) {
		verdict := "met"
		if got < target {
			verdict = "NOT met"
		}
		fmt.Printf("  %-28s %.2f  (target ≥ %.2f: %s)\n", name, got, target, verdict)
	}
	// What the ratio could reach if the gateway's MCP work cost nothing:
	// in the pinned layout the gateway and Postgres share one CPU, so a DB
	// tool call costs that CPU at least an HTTP exchange (respond's), the
	// pgx client's work (the driver's CPU per call in the pgx loop) and
	// Postgres's work for the call, while the combined limit counts the
	// first and Postgres's share of the pgx loop only.
	if rc, pc, dc := cases[0].cost, cases[1].cost, cases[2].cost; rc.driver >= 0 && pc.driver >= 0 && dc.postgres >= 0 {
		floor := rc.cpuPerCall() + perCall(pc.driver, pc.calls) + perCall(dc.postgres, dc.calls)
		fmt.Printf("DB tool ceiling with no MCP work 1e6/(respond %.1f + pgx client %.1f + Postgres %.1f µs) = %.0f req/s = %.2f × combined\n",
			rc.cpuPerCall(), perCall(pc.driver, pc.calls), perCall(dc.postgres, dc.calls), 1e6/floor, 1e6/floor/combined)
	}
	ratio("DB tool / combined", db/combined, 0.85)
	ratio("read_only / combined", ro/combined, 0.75)
	ratio("cache hit / respond", hit/respond, 0.90)
	ratio("JS handler / respond", js/respond, 0.85)
	var worst time.Duration
	for _, c := range cases[2:] {
		worst = max(worst, c.lat.max())
	}
	verdict := "met"
	if worst >= 100*time.Millisecond {
		verdict = "NOT met"
	}
	fmt.Printf("  %-28s %s  (target < 100ms: %s)\n", "worst gateway call", worst.Round(time.Microsecond), verdict)
}

// postRespondBody posts body to url and returns the answer.
func postRespondBody(ctx context.Context, client *http.Client, url, body string) ([]byte, error) {
	s := &session{url: url, client: client}
	out, _, err := s.post(ctx, body)
	return out, err
}

// loadAverage is the first line of /proc/loadavg, for the record: the
// machine is shared, and figures mean little without it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load average unknown"
	}
	f := strings.Fields(string(b))
	return "load average " + strings.Join(f[:3], " ")
}
