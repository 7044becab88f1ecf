package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// The limits scenario (-scenario limits): every target of the performance
// issue measured in one run, each call kind against the floor it cannot
// go below, measured in the same run. One Caddy serves:
//   - the HTTP floor: Caddy's respond with the very bytes of a DB tool
//     answer;
//   - the DB floor: a handler that runs the DB tool's query through pgx and
//     answers those bytes (dbFloor: HTTP plus the Postgres client, no MCP);
//   - the DB tool on a plain and on a read_only connector (against the DB
//     floor), both again with session_reset proven (the Postgres CPU
//     target), the same tool answering from the result cache and a
//     JavaScript handler (against the HTTP floor);
//   - the MCP proxy floor: reverse_proxy passing the same MCP exchange (the
//     same POST bodies, the session header) to an upstream MCP server, and
//     the gateway's MCP source calling the same upstream's tool;
//   - the OpenAPI proxy floor: reverse_proxy to a REST upstream, and an
//     OpenAPI source's tool for the same GET.
// A pgx pool in the load driver runs the tool's query directly (the bare
// query's Postgres CPU), and the upstreams are called directly too. In the
// pinned layout (layout.go, the default where it runs) the gateway and a
// private Postgres share one CPU, the driver and the upstreams have
// another, as in the measurements; in the shared one all runs in
// this process. Each case runs limitRounds times, alternating, so all
// share the background load; req/s is the median of the rounds. Per call
// the run prints the gateway's CPU, that CPU above the case's floor (µs
// and %), allocations, system calls and Postgres's CPU.

const limitRounds = 3

// limitCase is one measured scenario.
type limitCase struct {
	name  string
	call  func(*rand.Rand) error
	floor *limitCase // what the case is measured above, nil for a floor
	// sample samples a peer's process (peerProcess.sample); nil: the
	// gateway's (sampleCost).
	sample func() costSample
	rps    []float64 // per round
	lat    stats
	cost   cost
}

func (c *limitCase) median() float64 {
	r := slices.Clone(c.rps)
	slices.Sort(r)
	return r[len(r)/2]
}

// limitsUpstreams are what the proxy cases forward to, running in the
// load driver's process: an MCP server (mcp-go, an echo tool) and a REST
// API with its OpenAPI document.
type limitsUpstreams struct {
	mcp, rest, spec string // the MCP endpoint's URL, the REST host:port, the document's path
	stop            func()
}

func startLimitsUpstreams() *limitsUpstreams {
	mcpURL, stopMCP := startEchoUpstream()
	rest, spec, cleanup := itemsAPI()
	return &limitsUpstreams{mcp: mcpURL, rest: rest, spec: spec, stop: func() { stopMCP(); cleanup() }}
}

func loadLimitsGateway(port int, dsn, scriptsDir string, clients int, body []byte, up *limitsUpstreams) {
	respond, floor := "respond 200", ""
	if body != nil {
		respond = "respond `" + string(body) + "` 200"
		floor = fmt.Sprintf("route /db-floor {\n\t\theader Content-Type application/json\n\t\tbench_db_floor %s %d `%s`\n\t}", dsn, clients, body)
	}
	mcpHost := strings.TrimPrefix(strings.TrimSuffix(up.mcp, "/mcp"), "http://")
	loadSite(port, fmt.Sprintf(`	route /respond {
		header Content-Type application/json
		%s
	}
	%s
	reverse_proxy /upstream-mcp %s
	reverse_proxy /v1/* %s
	mcp /mcp {
		scripts_dir %s
		connector main postgres %s {
			max_conns %d
		}
		connector ro postgres %s {
			max_conns %d
			read_only
		}
		connector proven postgres %s {
			max_conns %d
			session_reset proven
		}
		connector ro-proven postgres %s {
			max_conns %d
			read_only
			session_reset proven
		}
%s		tool get-user-ro {
			description "Fetch a user by id, read only"
			use ro
			statement "SELECT id, name, email, created_at FROM edgemcp_bench.users WHERE id = {{ inputs.id }}"
			input id int required
		}
		tool get-user-proven {
			description "Fetch a user by id, without the session reset once proven"
			use proven
			statement "SELECT id, name, email, created_at FROM edgemcp_bench.users WHERE id = {{ inputs.id }}"
			input id int required
		}
		tool get-user-ro-proven {
			description "Fetch a user by id, read only, without the session reset once proven"
			use ro-proven
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
		source up mcp %s {
			transport streamable
			required
		}
		source api openapi %s {
			base_url http://%s/v1
			retries 0
		}
	}`, respond, floor, mcpHost, up.rest, scriptsDir, dsn, clients, dsn, clients, dsn, clients, dsn, clients, getUserTool(""), up.mcp, up.spec, up.rest))
}

// limitsRig is the limits scenario ready to run: the gateway loaded, the
// sessions open, the pgx pool, the cases.
type limitsRig struct {
	body  []byte // the DB tool's answer, respond's body
	cases []*limitCase
	// mcpLatency: the MCP upstream directly, through reverse_proxy and
	// through the gateway, for the latency at one client.
	mcpLatency [3]*limitCase
	close      func()
}

// startLimits loads the gateway (in the layout's process) and opens what
// the cases call.
func startLimits(ctx context.Context, dsn string, clients, rows, hot int, version, toolboxBin string) *limitsRig {
	dir := writeScripts(map[string]string{"hello/handler.js": benchScripts["hello/handler.js"]})
	up := startLimitsUpstreams()
	port := freePort()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)

	// respond answers with the bytes of a DB tool answer.
	loadLimitsGateway(port, dsn, dir, clients, nil, up)
	probe, err := openSession(ctx, base+"/mcp", version)
	check(err)
	body, _, err := probe.post(ctx, callBody(1, 1))
	check(err)
	body = bytes.TrimSpace(body)
	loadLimitsGateway(port, dsn, dir, clients, body, up)
	transport.CloseIdleConnections() // the reload closed them
	client := &http.Client{Transport: transport}
	for _, route := range []string{"/respond", "/db-floor"} {
		got, err := postRespondBody(ctx, client, base+route, callBody(1, 1))
		check(err)
		if !bytes.Equal(got, body) {
			fmt.Printf("warning: %s's body (%d bytes) differs from the tool's answer (%d bytes)\n", route, len(got), len(body))
		}
	}

	pool := openPool(ctx, dsn, clients)
	sessions := openSessions(ctx, base+"/mcp", version, clients)
	upstream := openSessions(ctx, up.mcp, version, clients)
	proxied := openSessions(ctx, base+"/upstream-mcp", version, clients)
	anyID := func(r *rand.Rand) int64 { return r.Int64N(int64(rows)) + 1 }
	byID := func(tool string, id func(*rand.Rand) int64) func(*rand.Rand) error {
		return func(r *rand.Rand) error {
			return sessions[r.IntN(clients)].callTool(ctx, tool, fmt.Sprintf(`{"id":%d}`, id(r)))
		}
	}
	respond := &limitCase{name: "caddy respond", call: func(r *rand.Rand) error {
		return postRespond(ctx, client, base+"/respond", callBody(r.Int64(), anyID(r)))
	}}
	dbFloor := &limitCase{name: "DB floor", call: func(r *rand.Rand) error {
		return postRespond(ctx, client, base+"/db-floor", callBody(r.Int64(), anyID(r)))
	}}
	mcpDirect := &limitCase{name: "MCP upstream direct", call: echoCall(ctx, upstream, "echo")}
	mcpFloor := &limitCase{name: "MCP reverse_proxy", call: echoCall(ctx, proxied, "echo")}
	mcpTool := &limitCase{name: "MCP source tool", call: echoCall(ctx, sessions, "up_echo"), floor: mcpFloor}
	restFloor := &limitCase{name: "REST reverse_proxy", call: restGet(ctx, client, base)}
	cases := []*limitCase{
		respond,
		{name: "direct pgx loop", call: func(r *rand.Rand) error { return lookupUser(ctx, pool, anyID(r)) }},
		dbFloor,
		{name: "DB tool", call: byID("get-user", anyID), floor: dbFloor},
		{name: "DB tool read_only", call: byID("get-user-ro", anyID), floor: dbFloor},
		// The same two with session_reset proven: the target for
		// Postgres's CPU per call (the bare query's + 3 µs). The proofs are
		// made in the warm-up, which driveCost does not count.
		{name: "DB tool, session_reset proven", call: byID("get-user-proven", anyID), floor: dbFloor},
		{name: "DB tool read_only, session_reset proven", call: byID("get-user-ro-proven", anyID), floor: dbFloor},
		// drive's warm-up fills the cache with the hot keys.
		{name: "cache hit", call: byID("get-user-cached", func(r *rand.Rand) int64 { return r.Int64N(int64(hot)) + 1 }), floor: respond},
		{name: "JS handler", call: func(r *rand.Rand) error {
			return sessions[r.IntN(clients)].callTool(ctx, "hello", `{"name":"Ada"}`)
		}, floor: respond},
		mcpDirect, mcpFloor, mcpTool,
		restFloor,
		{name: "OpenAPI tool", call: openAPICall(ctx, sessions), floor: restFloor},
	}
	var toolbox *peerProcess
	if toolboxBin != "" {
		toolbox, err = startToolbox(ctx, toolboxBin, dsn, version)
		check(err)
		peer := openSessions(ctx, toolbox.url, toolboxProtocol(version), clients)
		cases = append(cases, &limitCase{name: toolboxCase, sample: toolbox.sample, call: func(r *rand.Rand) error {
			return peer[r.IntN(clients)].callTool(ctx, toolboxTool, fmt.Sprintf(`{"id":%d}`, anyID(r)))
		}})
	}
	stop := sync.OnceFunc(func() {
		pool.Close()
		if toolbox != nil {
			toolbox.stop()
		}
		// The gateway's sources go before their upstreams: a source whose
		// upstream went first keeps reconnecting until it is stopped.
		if pinned == nil {
			_ = caddy.Stop()
		} else {
			loadSite(port, "\trespond 200")
		}
		transport.CloseIdleConnections()
		up.stop()
		_ = os.RemoveAll(dir)
	})
	onExit(stop) // also on Ctrl-C, before the pinned layout stops
	return &limitsRig{body: body, cases: cases, mcpLatency: [3]*limitCase{mcpDirect, mcpFloor, mcpTool}, close: stop}
}

// toolboxCase is the peer row's name (-peer-toolbox).
const toolboxCase = "MCP Toolbox postgres-sql tool"

func runLimitsBench(ctx context.Context, dsn string, clients int, d time.Duration, rows, hot int, version, cpuProfile, toolboxBin string) {
	rig := startLimits(ctx, dsn, clients, rows, hot, version, toolboxBin)
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
			sample := c.sample
			if sample == nil {
				sample = sampleCost
			}
			st, cs := driveCostOf(sample, clients, d/limitRounds, c.call)
			if profile {
				gatewayEndProfile()
				gatewayAllocs(prefix + ".allocs-after")
			}
			c.rps = append(c.rps, st.rps())
			c.lat.merge(st)
			c.cost.merge(cs)
		}
	}
	width := 20
	for _, c := range cases {
		width = max(width, len(c.name))
	}
	fmt.Printf("%-*s %8s %9s %9s %9s %6s %12s %20s %8s %8s %10s\n", width, "", "req/s", "p50", "p99", "max", "errors",
		"server CPU", "above floor", "allocs", "syscalls", "Postgres")
	for _, c := range cases {
		allocs := strconv.FormatFloat(c.cost.allocsPerCall(), 'f', 0, 64)
		if c.sample != nil {
			allocs = "" // a peer's are not counted
		}
		fmt.Printf("%-*s %8.0f %9s %9s %9s %6d %12s %20s %8s %8s %10s\n", width, c.name, c.median(),
			c.lat.pct(0.50).Round(time.Microsecond), c.lat.pct(0.99).Round(time.Microsecond),
			c.lat.max().Round(time.Microsecond), c.lat.errors, perCallMicros(c.cost.cpuPerCall()), c.aboveFloor(),
			allocs, c.cost.syscallsPerCall(), postgresPerCall(c.cost))
		if c.lat.firstErr != nil {
			fmt.Printf("%-20s first error: %.300v\n", "", c.lat.firstErr)
		}
	}
	if rc, pc := cases[0].cost, cases[1].cost; rc.driver >= 0 && pc.driver >= 0 {
		fmt.Printf("driver CPU per call: respond %.1f µs, direct pgx loop %.1f µs (the Postgres client's share of the loop)\n",
			perCall(rc.driver, rc.calls), perCall(pc.driver, pc.calls))
	}
	byName := map[string]*limitCase{}
	for _, c := range cases {
		byName[c.name] = c
	}
	target := func(name string, got, limit float64, unit string) {
		verdict := "met"
		if got > limit {
			verdict = "NOT met"
		}
		fmt.Printf("  %-80s %+7.1f %s (target ≤ +%.0f %s: %s)\n", name, got, unit, limit, unit, verdict)
	}
	above := func(name string) float64 { c := byName[name]; return c.cost.cpuPerCall() - c.floor.cost.cpuPerCall() }
	abovePct := func(name string) float64 { return 100 * above(name) / byName[name].floor.cost.cpuPerCall() }
	fmt.Println("targets (gateway CPU per call above the floor):")
	target("cache hit, vs the HTTP floor", above("cache hit"), 8, "µs")
	target("JS handler, vs the HTTP floor", above("JS handler"), 15, "µs")
	target("DB tool, vs the DB floor", above("DB tool"), 20, "µs")
	target("DB tool read_only, vs the DB floor", above("DB tool read_only"), 25, "µs")
	target("DB tool, session_reset proven, vs the DB floor", above("DB tool, session_reset proven"), 20, "µs")
	target("DB tool read_only, session_reset proven, vs the DB floor", above("DB tool read_only, session_reset proven"), 25, "µs")
	target("OpenAPI tool, vs reverse_proxy", abovePct("OpenAPI tool"), 10, "%")
	target("MCP source tool, vs reverse_proxy", abovePct("MCP source tool"), 30, "%")
	for _, name := range []string{"DB tool", "DB tool read_only", "DB tool, session_reset proven", "DB tool read_only, session_reset proven"} {
		if pg, db := byName["direct pgx loop"].cost, byName[name].cost; pg.postgres >= 0 && db.postgres >= 0 {
			target("Postgres CPU per call, "+name+", vs the bare query", perCall(db.postgres, db.calls)-perCall(pg.postgres, pg.calls), 3, "µs")
		}
	}
	if tb := byName[toolboxCase]; tb != nil && tb.cost.postgres >= 0 {
		// The total-cost target: the server's and Postgres's CPU
		// per call together, against Toolbox's in the same run.
		total := func(c cost) float64 { return c.cpuPerCall() + perCall(c.postgres, c.calls) }
		fmt.Printf("total CPU per DB call (server + Postgres), against %s's %.1f µs:\n", toolboxCase, total(tb.cost))
		for _, name := range []string{"DB tool", "DB tool read_only", "DB tool, session_reset proven", "DB tool read_only, session_reset proven"} {
			ratio := total(byName[name].cost) / total(tb.cost)
			verdict := "met"
			if ratio > 0.75 {
				verdict = "NOT met"
			}
			fmt.Printf("  %-80s %7.1f µs = %.2f × (target ≤ 0.75 ×: %s)\n", name, total(byName[name].cost), ratio, verdict)
		}
	}
	var worst time.Duration
	for _, c := range cases {
		if c.floor != nil {
			worst = max(worst, c.lat.max())
		}
	}
	verdict := "met"
	if worst >= 100*time.Millisecond {
		verdict = "NOT met"
	}
	fmt.Printf("  %-80s %s  (target < 100ms: %s)\n", "worst gateway call", worst.Round(time.Microsecond), verdict)

	// At one client: what a proxied MCP call adds to the latency.
	fmt.Println("MCP proxy at 1 client, p50 (3 rounds):")
	one := make([]*stats, len(rig.mcpLatency))
	for i := range one {
		one[i] = &stats{}
	}
	for range limitRounds {
		for i, c := range rig.mcpLatency {
			one[i].merge(drive(1, d/limitRounds/2, c.call))
		}
	}
	for i, c := range rig.mcpLatency {
		fmt.Printf("  %-22s p50 %-9s p99 %-9s\n", c.name, one[i].pct(0.5).Round(time.Microsecond), one[i].pct(0.99).Round(time.Microsecond))
	}
	target("MCP source tool p50, vs directly", float64((one[2].pct(0.5) - one[0].pct(0.5)).Microseconds()), 150, "µs")
}

// aboveFloor is the gateway CPU per call above the case's floor, in µs
// and as a share of the floor; "" for a floor.
func (c *limitCase) aboveFloor() string {
	if c.floor == nil || c.floor.cost.calls == 0 || c.cost.calls == 0 {
		return ""
	}
	f, g := c.floor.cost.cpuPerCall(), c.cost.cpuPerCall()
	return fmt.Sprintf("%+.1f µs %+.0f%%", g-f, 100*(g-f)/f)
}

func perCallMicros(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " µs" }

// postgresPerCall is Postgres's CPU per call, "" when not measured or
// when the case does not reach Postgres.
func postgresPerCall(c cost) string {
	if c.postgres < 0 || c.calls == 0 {
		return ""
	}
	v := perCall(c.postgres, c.calls)
	if v < 1 {
		return ""
	}
	return perCallMicros(v)
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
