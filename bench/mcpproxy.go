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

func runMCPProxyBench(ctx context.Context, clients int, d time.Duration, version, cpuProfile string) {
	upstream, stop := startEchoUpstream()
	defer stop()
	base := loadSite(freePort(), fmt.Sprintf(`	mcp /mcp {
		source up mcp %s {
			transport streamable
			required
		}
	}`, upstream))
	defer caddy.Stop()

	direct := make([]*session, clients)
	proxied := make([]*session, clients)
	var err error
	for i := range clients {
		direct[i], err = openSession(ctx, upstream, version)
		check(err)
		proxied[i], err = openSession(ctx, base+"/mcp", version)
		check(err)
	}
	call := func(sessions []*session, tool string) func(r *rand.Rand) error {
		return func(r *rand.Rand) error {
			s := sessions[r.IntN(clients)]
			n := r.Int64N(1000)
			res, _, err := s.post(ctx, echoCallBody(s.seq.Add(1), tool, n))
			if err == nil && !bytes.Contains(res, []byte(`echo: m`+strconv.FormatInt(n, 10)+`"`)) {
				err = fmt.Errorf("%s: %.200s", tool, res)
			}
			return err
		}
	}
	check(call(proxied, "up_echo")(rand.New(rand.NewPCG(1, 2))))

	fmt.Printf("edgemcp mcp proxy bench: %d clients, %s per side, GOMAXPROCS=%d\n", clients, d, runtime.GOMAXPROCS(0))
	up, gw := &stats{}, &stats{}
	var upCost, gwCost cost
	for range benchRounds {
		st, c := driveCost(clients, d/benchRounds, call(direct, "echo"))
		up.merge(st)
		upCost.merge(c)
		st, c = driveCost(clients, d/benchRounds, call(proxied, "up_echo"))
		gw.merge(st)
		gwCost.merge(c)
	}
	up.print("upstream directly")
	gw.print("through edgemcp")
	fmt.Printf("added p50: %s; ratio: through edgemcp/directly = %.2f\n",
		(gw.pct(0.5) - up.pct(0.5)).Round(time.Microsecond), gw.rps()/up.rps())
	fmt.Printf("per call (whole process: bench client, upstream and gateway): directly %s; through edgemcp %s; the gateway adds %.0f µs CPU, %.0f allocations\n",
		&upCost, &gwCost, gwCost.cpuPerCall()-upCost.cpuPerCall(), gwCost.allocsPerCall()-upCost.allocsPerCall())

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
