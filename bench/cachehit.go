package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// The cache-hit scenario (-scenario cache): in one Caddy, the get-user tool
// with `cache 1h` answering from the result cache, next to a stock
// `respond` handler whose body is as long as the tool's answer. Both are
// driven by the same clients over the same HTTP transport, in alternating
// rounds; the ratio says what the MCP endpoint, the pipeline and the cache
// cost over Caddy's cheapest handler.

// loadCacheGateway (re)loads the site: the respond route returns bodySize
// bytes (0 before the size is known).
func loadCacheGateway(port int, dsn string, clients, bodySize int) {
	loadSite(port, fmt.Sprintf(`	respond /respond "%s" 200
	mcp /mcp {
		connector main postgres %s {
			max_conns %d
		}
%s	}`, strings.Repeat("x", bodySize), dsn, clients, getUserTool("cache 1h")))
}

// runCacheBench measures respond, then cache hits over hot distinct keys,
// and prints both and the ratio.
func runCacheBench(ctx context.Context, dsn string, clients int, d time.Duration, hot int, version, cpuProfile string) {
	port := freePort()
	mcpURL := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	respondURL := fmt.Sprintf("http://127.0.0.1:%d/respond", port)

	// Learn the size of the tool's answer, then give respond a body that long.
	loadCacheGateway(port, dsn, clients, 0)
	probe, err := openSession(ctx, mcpURL, version)
	check(err)
	body, _, err := probe.post(ctx, callBody(1, int64(hot)))
	check(err)
	loadCacheGateway(port, dsn, clients, len(body))
	// The reload closed the probe's keep-alive connection; a POST on it
	// would fail rather than be retried.
	transport.CloseIdleConnections()
	defer caddy.Stop()

	fmt.Printf("edgemcp cache bench: %d clients, %s per side, %d hot keys, %d-byte answers, GOMAXPROCS=%d\n",
		clients, d, hot, len(body), runtime.GOMAXPROCS(0))
	client := &http.Client{Transport: transport}
	sessions := make([]*session, clients)
	for i := range sessions {
		sessions[i], err = openSession(ctx, mcpURL, version)
		check(err)
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		check(err)
		check(pprof.StartCPUProfile(f))
	}
	// The machine is shared: alternating short rounds gives both sides the
	// same background load.
	respond, hits := &stats{}, &stats{}
	var respondCost, hitsCost cost
	for range benchRounds {
		st, c := driveCost(clients, d/benchRounds, func(r *rand.Rand) error {
			return postRespond(ctx, client, respondURL, callBody(r.Int64(), r.Int64N(int64(hot))+1))
		})
		respond.merge(st)
		respondCost.merge(c)
		st, c = driveCost(clients, d/benchRounds, func(r *rand.Rand) error {
			// drive's one-second warm-up fills the cache with the hot keys.
			return sessions[r.IntN(clients)].callGetUser(ctx, r.Int64N(int64(hot))+1)
		})
		hits.merge(st)
		hitsCost.merge(c)
	}
	pprof.StopCPUProfile()
	respond.print("caddy respond")
	hits.print("edgemcp cache hit")
	fmt.Printf("ratio: cache hit/respond = %.2f (target ≥ 0.90)\n", hits.rps()/respond.rps())
	printCostRatio("respond", respondCost, "cache hit", hitsCost)
}

const benchRounds = 4

// merge adds another round's measurements.
func (s *stats) merge(o *stats) {
	s.lat = append(s.lat, o.lat...)
	slices.Sort(s.lat)
	s.errors += o.errors
	if s.firstErr == nil {
		s.firstErr = o.firstErr
	}
	s.elapsed += o.elapsed
}

func callBody(id, user int64) string {
	return `{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) +
		`,"method":"tools/call","params":{"name":"get-user","arguments":{"id":` + strconv.FormatInt(user, 10) + `}}}`
}

// postRespond sends what an MCP client would send, to the respond route.
func postRespond(ctx context.Context, client *http.Client, url, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, err = io.Copy(io.Discard, res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("respond: HTTP %d", res.StatusCode)
	}
	return err
}
