package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// -scenario mcp: an upstream MCP server (mcp-go, streamable HTTP, in this
// process) with an echo tool, called directly by MCP sessions and, in the
// same run, through the gateway, which serves it as the tool up_echo of an
// MCP source. Rounds alternate between the two; the figures are the
// gateway's added latency at the median and the ratio of requests/s.

// startEchoUpstream serves the upstream on a free loopback port.
func startEchoUpstream() (url string, stop func()) {
	s := server.NewMCPServer("bench-upstream", "1")
	s.AddTool(mcp.NewTool("echo", mcp.WithString("message")), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("echo: " + req.GetString("message", "")), nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	srv := &http.Server{Handler: server.NewStreamableHTTPServer(s)}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/mcp", func() { _ = srv.Close() }
}

func echoCallBody(id int64, name string, n int64) string {
	return `{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"tools/call","params":{"name":"` + name +
		`","arguments":{"message":"m` + strconv.FormatInt(n, 10) + `"}}}`
}

// echoCall is one call of the echo tool (named tool where it is called)
// on one of sessions, its answer checked.
func echoCall(ctx context.Context, sessions []*session, tool string) func(r *rand.Rand) error {
	return func(r *rand.Rand) error {
		s := sessions[r.IntN(len(sessions))]
		n := r.Int64N(1000)
		res, _, err := s.post(ctx, echoCallBody(s.seq.Add(1), tool, n))
		if err == nil && !bytes.Contains(res, []byte(`echo: m`+strconv.FormatInt(n, 10)+`"`)) {
			err = fmt.Errorf("%s: %.200s", tool, res)
		}
		return err
	}
}

func runMCPProxyBench(ctx context.Context, clients int, d time.Duration, version, cpuProfile string) {
	upstream, stop := startEchoUpstream()
	defer stop()
	base := loadSite(freePort(), fmt.Sprintf(`	reverse_proxy /upstream-mcp %s
	mcp /mcp {
		source up mcp %s {
			transport streamable
			required
		}
	}`, strings.TrimSuffix(strings.TrimPrefix(upstream, "http://"), "/mcp"), upstream))
	defer caddy.Stop()

	direct := openSessions(ctx, upstream, version, clients)
	floor := openSessions(ctx, base+"/upstream-mcp", version, clients)
	proxied := openSessions(ctx, base+"/mcp", version, clients)
	call := func(sessions []*session, tool string) func(r *rand.Rand) error { return echoCall(ctx, sessions, tool) }
	check(call(proxied, "up_echo")(rand.New(rand.NewPCG(1, 2))))

	// Three sides in alternating rounds: the upstream called directly,
	// through Caddy's reverse_proxy (the floor of any proxy: two HTTP
	// exchanges, the same bytes), through the gateway's MCP source.
	sides := []struct {
		name     string
		sessions []*session
		tool     string
		st       *stats
		cost     cost
	}{{name: "upstream directly", sessions: direct, tool: "echo"}, {name: "reverse_proxy", sessions: floor, tool: "echo"},
		{name: "through edgemcp", sessions: proxied, tool: "up_echo"}}
	fmt.Printf("edgemcp mcp proxy bench: %d clients, %s per side, GOMAXPROCS=%d, %s\n", clients, d, runtime.GOMAXPROCS(0), loadAverage())
	for i := range sides {
		sides[i].st = &stats{}
	}
	for range benchRounds {
		for i := range sides {
			st, c := driveCost(clients, d/benchRounds, call(sides[i].sessions, sides[i].tool))
			sides[i].st.merge(st)
			sides[i].cost.merge(c)
		}
	}
	for _, s := range sides {
		s.st.print(s.name)
	}
	up, rp, gw := sides[0], sides[1], sides[2]
	fmt.Printf("added p50: %s over directly, %s over reverse_proxy; ratio: through edgemcp/directly = %.2f, /reverse_proxy = %.2f\n",
		(gw.st.pct(0.5) - up.st.pct(0.5)).Round(time.Microsecond), (gw.st.pct(0.5) - rp.st.pct(0.5)).Round(time.Microsecond),
		gw.st.rps()/up.st.rps(), gw.st.rps()/rp.st.rps())
	fmt.Printf("per call (whole process: bench client, upstream and the proxy): directly %s; reverse_proxy %s; through edgemcp %s\n",
		&up.cost, &rp.cost, &gw.cost)
	fmt.Printf("reverse_proxy adds %.0f µs CPU, %.0f allocations per call; the gateway %.0f µs (%+.0f µs, %+.0f%% over reverse_proxy's), %.0f allocations\n",
		rp.cost.cpuPerCall()-up.cost.cpuPerCall(), rp.cost.allocsPerCall()-up.cost.allocsPerCall(),
		gw.cost.cpuPerCall()-up.cost.cpuPerCall(), gw.cost.cpuPerCall()-rp.cost.cpuPerCall(),
		100*(gw.cost.cpuPerCall()-rp.cost.cpuPerCall())/(rp.cost.cpuPerCall()-up.cost.cpuPerCall()),
		gw.cost.allocsPerCall()-up.cost.allocsPerCall())

	// One client: the latency a proxy adds with no queue for the cores.
	one := make([]*stats, len(sides))
	for i := range one {
		one[i] = &stats{}
	}
	for range benchRounds {
		for i, s := range sides {
			one[i].merge(drive(1, d/benchRounds/4, call(s.sessions, s.tool)))
		}
	}
	fmt.Printf("1 client, p50: directly %s, reverse_proxy %s, through edgemcp %s (the gateway adds %s over directly, %s over reverse_proxy)\n",
		one[0].pct(0.5).Round(time.Microsecond), one[1].pct(0.5).Round(time.Microsecond), one[2].pct(0.5).Round(time.Microsecond),
		(one[2].pct(0.5) - one[0].pct(0.5)).Round(time.Microsecond), (one[2].pct(0.5) - one[1].pct(0.5)).Round(time.Microsecond))

	if cpuProfile != "" { // one more proxied round, profiled alone; its allocations in <file>.allocs
		f, err := os.Create(cpuProfile)
		check(err)
		runtime.MemProfileRate = 4096
		check(pprof.StartCPUProfile(f))
		drive(clients, d/benchRounds, call(proxied, "up_echo"))
		pprof.StopCPUProfile()
		check(f.Close())
		a, err := os.Create(cpuProfile + ".allocs")
		check(err)
		check(pprof.Lookup("allocs").WriteTo(a, 0))
		check(a.Close())
	}
}
