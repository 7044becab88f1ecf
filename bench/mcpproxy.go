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
	"sync/atomic"
	"syscall"
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
			callsMade.Add(1)
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
		up.merge(upCost.measure(func() *stats { return drive(clients, d/benchRounds, call(direct, "echo")) }))
		gw.merge(gwCost.measure(func() *stats { return drive(clients, d/benchRounds, call(proxied, "up_echo")) }))
	}
	up.print("upstream directly")
	gw.print("through edgemcp")
	fmt.Printf("added p50: %s; ratio: through edgemcp/directly = %.2f\n",
		(gw.pct(0.5) - up.pct(0.5)).Round(time.Microsecond), gw.rps()/up.rps())
	fmt.Printf("per call (whole process: bench client, upstream and gateway): directly %s, through edgemcp %s; the gateway adds %.0f µs CPU, %.0f allocations\n",
		upCost, gwCost, gwCost.cpuPerCall()-upCost.cpuPerCall(), gwCost.allocsPerCall()-upCost.allocsPerCall())

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

// cost sums the process's CPU time and heap allocations over rounds, and
// the calls made in them (warm-up included, as its CPU is too).
type cost struct {
	cpu    time.Duration
	allocs uint64
	calls  int
}

func (c *cost) measure(round func() *stats) *stats {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := processCPU()
	before := callsMade.Load()
	s := round()
	c.cpu += processCPU() - cpu0
	runtime.ReadMemStats(&m1)
	c.allocs += m1.Mallocs - m0.Mallocs
	c.calls += int(callsMade.Load() - before)
	return s
}

func (c cost) cpuPerCall() float64 { return float64(c.cpu.Microseconds()) / float64(max(c.calls, 1)) }

func (c cost) allocsPerCall() float64 { return float64(c.allocs) / float64(max(c.calls, 1)) }

func (c cost) String() string {
	return fmt.Sprintf("%.0f µs CPU, %.0f allocations", c.cpuPerCall(), c.allocsPerCall())
}

// callsMade counts the bench's calls, warm-up included.
var callsMade atomic.Int64

// processCPU is the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
