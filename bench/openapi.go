package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// The OpenAPI scenarios.
//
// -scenario openapi: in one Caddy, a tool of an OpenAPI source proxying a
// GET to a local upstream, next to Caddy's own `reverse_proxy` to the same
// upstream, driven by the same clients in alternating rounds; the ratio
// says what the MCP endpoint, the argument checks, the request building
// and the result encoding cost over a plain proxy.
//
// -scenario openapi-spec: a large document (GitHub's REST API, from
// tests/node after `npm ci`; -spec) loaded as a source: how long Caddy
// takes to load it, the heap it keeps, and tools/list latency.

// itemsSpec describes the upstream: one GET with a path parameter.
const itemsSpec = `{"openapi": "3.0.3", "info": {"title": "items", "version": "1"},
 "paths": {"/items/{id}": {"get": {"operationId": "getItem",
   "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1}}],
   "responses": {"200": {"description": "an item", "content": {"application/json": {"schema": {
     "type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"},
     "price": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}}}}}}}}}}}}`

// upstreamConns counts the connections the upstream accepted.
var upstreamConns atomic.Int64

// startItemsUpstream serves GET /v1/items/{id} on a loopback port.
func startItemsUpstream() (addr string, stop func()) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/items/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.PathValue("id"))
		if err != nil {
			http.Error(w, "bad id", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%d,"name":"item %d","price":%d.5,"tags":["bench","openapi"]}`, id, id, id%100)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	srv := &http.Server{Handler: mux, ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			upstreamConns.Add(1)
		}
	}}
	go srv.Serve(l)
	return l.Addr().String(), func() { srv.Close() }
}

// itemsAPI starts the items upstream and writes its document to a file.
func itemsAPI() (upstream, spec string, cleanup func()) {
	upstream, stopUpstream := startItemsUpstream()
	dir, err := os.MkdirTemp("", "edgemcp-bench-")
	check(err)
	spec = filepath.Join(dir, "items.json")
	check(os.WriteFile(spec, []byte(itemsSpec), 0o644))
	return upstream, spec, func() { stopUpstream(); os.RemoveAll(dir) }
}

// cpuProfile, if set, receives a CPU profile of the rounds.
func runOpenAPIBench(ctx context.Context, clients int, d time.Duration, version, cpuProfile string) {
	upstream, spec, cleanup := itemsAPI()
	defer cleanup()

	base := loadSite(freePort(), fmt.Sprintf(`	reverse_proxy /v1/* %s
	mcp /mcp {
		source api openapi %s {
			base_url http://%s/v1
			retries 0
		}
	}`, upstream, spec, upstream))
	defer caddy.Stop()

	sessions := make([]*session, clients)
	var err error
	for i := range sessions {
		sessions[i], err = openSession(ctx, base+"/mcp", version)
		check(err)
	}
	// One call of each, to check they work and to show the sizes.
	probe, _, err := sessions[0].post(ctx, itemCallBody(1, 7))
	check(err)
	if !bytes.Contains(probe, []byte(`"item 7"`)) {
		check(fmt.Errorf("api_getItem: %.300s", probe))
	}
	client := &http.Client{Transport: transport}
	direct, err := getItem(ctx, client, base+"/v1/items/7")
	check(err)

	fmt.Printf("edgemcp openapi bench: %d clients, %s per side, upstream answer %d bytes, MCP answer %d bytes, GOMAXPROCS=%d\n",
		clients, d, direct, len(probe), runtime.GOMAXPROCS(0))
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		check(err)
		check(pprof.StartCPUProfile(f))
	}
	proxy, tool := &stats{}, &stats{}
	var proxyConns, toolConns int64
	var proxyCost, toolCost cost
	for range benchRounds {
		n := upstreamConns.Load()
		st, c := driveCost(clients, d/benchRounds, restGet(ctx, client, base))
		proxy.merge(st)
		proxyCost.merge(c)
		proxyConns += upstreamConns.Load() - n
		n = upstreamConns.Load()
		st, c = driveCost(clients, d/benchRounds, openAPICall(ctx, sessions))
		tool.merge(st)
		toolCost.merge(c)
		toolConns += upstreamConns.Load() - n
	}
	pprof.StopCPUProfile()
	proxy.print("caddy reverse_proxy")
	tool.print("edgemcp openapi tool")
	fmt.Printf("connections the upstream accepted: %d from reverse_proxy, %d from the openapi tool\n", proxyConns, toolConns)
	fmt.Printf("ratio: openapi tool/reverse_proxy = %.2f (target ≥ 0.7)\n", tool.rps()/proxy.rps())
	printCostRatio("reverse_proxy", proxyCost, "openapi tool", toolCost)
}

// restGet is one GET of a random item through the reverse_proxy at base.
func restGet(ctx context.Context, client *http.Client, base string) func(*rand.Rand) error {
	return func(r *rand.Rand) error {
		_, err := getItem(ctx, client, base+"/v1/items/"+strconv.FormatInt(r.Int64N(10000)+1, 10))
		return err
	}
}

// openAPICall is one call of the tool api_getItem for a random item on
// one of sessions, its answer checked.
func openAPICall(ctx context.Context, sessions []*session) func(*rand.Rand) error {
	return func(r *rand.Rand) error {
		s := sessions[r.IntN(len(sessions))]
		res, _, err := s.post(ctx, itemCallBody(s.seq.Add(1), r.Int64N(10000)+1))
		if err == nil && !bytes.Contains(res, []byte(`"structuredContent"`)) {
			err = fmt.Errorf("api_getItem: %.200s", res)
		}
		return err
	}
}

func itemCallBody(id, item int64) string {
	return `{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) +
		`,"method":"tools/call","params":{"name":"api_getItem","arguments":{"id":` + strconv.FormatInt(item, 10) + `}}}`
}

// getItem is the proxied GET; it returns the body's size.
func getItem(ctx context.Context, client *http.Client, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	n, err := io.Copy(io.Discard, res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("reverse_proxy: HTTP %d", res.StatusCode)
	}
	return int(n), err
}

// runSpecBench loads the document at spec as a source, three times (the
// first is a cold start of the process's caches), and lists its tools from
// one session: the first page for half of d, then every page to the last
// for the other half.
// cpuProfile, if set, receives a CPU profile of the three loads, and
// cpuProfile.list one of the listings of every page.
func runSpecBench(ctx context.Context, spec string, d time.Duration, version, cpuProfile string) {
	if _, err := os.Stat(spec); err != nil {
		check(fmt.Errorf("%v: GitHub's document comes with `npm ci` in tests/node (@octokit/openapi), or give -spec", err))
	}
	fi, _ := os.Stat(spec)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	site := fmt.Sprintf(`	mcp /mcp {
		source gh openapi %s {
			base_url http://127.0.0.1:9/
		}
	}`, spec)
	port := freePort()
	before := heap()
	var loads, cpus []time.Duration
	var heaps []uint64
	var base string
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		check(err)
		check(pprof.StartCPUProfile(f))
	}
	for range 3 {
		start, cpu := time.Now(), sampleCost().cpu
		base = loadSite(port, site)
		loads = append(loads, time.Since(start))
		cpus = append(cpus, sampleCost().cpu-cpu)
		transport.CloseIdleConnections()
		heaps = append(heaps, heap())
	}
	pprof.StopCPUProfile()
	defer caddy.Stop()

	s, err := openSession(ctx, base+"/mcp", version)
	check(err)
	list, _, err := s.post(ctx, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	check(err)
	first := bytes.Count(list, []byte(`"inputSchema"`))
	tools, pages, err := listEveryPage(ctx, s)
	check(err)
	fmt.Printf("edgemcp openapi-spec bench: %s (%d bytes), %d tools in %d pages, tools/list answer (first page, %d tools) %d bytes, GOMAXPROCS=%d, %s\n",
		filepath.Base(spec), fi.Size(), tools, pages, first, len(list), runtime.GOMAXPROCS(0), loadAverage())
	fmt.Printf("load: %s (first), %s, %s (reloads); CPU time %s, %s, %s (the wall time on a busy machine is longer)\n",
		round(loads[0]), round(loads[1]), round(loads[2]), round(cpus[0]), round(cpus[1]), round(cpus[2]))
	fmt.Printf("heap in use (after GC): %.1f MiB before, %.1f MiB after the load (+%.1f MiB), %.1f and %.1f MiB after the reloads\n",
		mib(before), mib(heaps[0]), mib(heaps[0])-mib(before), mib(heaps[1]), mib(heaps[2]))
	lists := drive(1, d/2, func(*rand.Rand) error {
		res, _, err := s.post(ctx, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		if err == nil && !bytes.HasSuffix(bytes.TrimSpace(res), []byte("}")) {
			err = fmt.Errorf("tools/list: %.200s", res)
		}
		return err
	})
	lists.print("tools/list")
	// The target: every page, from the first to the one without
	// nextCursor, from one session, under 50 ms at p50.
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile + ".list")
		check(err)
		check(pprof.StartCPUProfile(f))
	}
	whole := drive(1, d/2, func(*rand.Rand) error {
		n, _, err := listEveryPage(ctx, s)
		if err == nil && n != tools {
			err = fmt.Errorf("tools/list: %d tools over the pages, the first listing had %d", n, tools)
		}
		return err
	})
	pprof.StopCPUProfile()
	whole.print("every page")
	verdict := "met"
	if whole.pct(0.5) >= 50*time.Millisecond {
		verdict = "NOT met"
	}
	fmt.Printf("  every page of tools/list from one session, p50 %s (target < 50ms: %s)\n", whole.pct(0.5).Round(time.Microsecond), verdict)
}

// listEveryPage lists s's tools from the first page to the last (the one
// without nextCursor) and counts them and the pages.
func listEveryPage(ctx context.Context, s *session) (tools, pages int, err error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for {
		page, _, err := s.post(ctx, body)
		if err != nil {
			return tools, pages, err
		}
		pages++
		tools += bytes.Count(page, []byte(`"inputSchema"`))
		cursor, err := nextCursor(page)
		if err != nil {
			return tools, pages, fmt.Errorf("tools/list page %d: %v: %.200s", pages, err, page)
		}
		if cursor == "" {
			return tools, pages, nil
		}
		quoted, _ := json.Marshal(cursor)
		body = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":` + string(quoted) + `}}`
	}
}

// nextCursor reads a tools/list answer's result.nextCursor as far as the
// result's "tools": the gateway and mcp-go both write nextCursor before
// the tools. Decoding a whole page of GitHub's tools (740 KB) costs a Go
// client about 6 ms, more than the gateway spends on it, and would be the
// bench's own time in the figure; listEveryPage's count of the tools
// checks that the walk did reach the last page.
func nextCursor(page []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(page))
	want := []json.Token{json.Delim('{')}
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		if len(want) > 0 {
			if tok != want[0] {
				return "", fmt.Errorf("unexpected %v", tok)
			}
			want = want[1:]
			depth++
			continue
		}
		key, ok := tok.(string)
		if !ok {
			return "", fmt.Errorf("unexpected %v", tok)
		}
		switch {
		case depth == 1 && key == "result":
			want = []json.Token{json.Delim('{')}
		case depth == 2 && key == "nextCursor":
			var c string
			err := dec.Decode(&c)
			return c, err
		case depth == 2 && key == "tools":
			return "", nil
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return "", err
			}
		}
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func round(d time.Duration) string { return d.Round(time.Millisecond).String() }

// defaultSpec is GitHub's document where `npm ci` in tests/node puts it.
func defaultSpec() string {
	return filepath.Join("tests", "node", "node_modules", "@octokit", "openapi", "generated", "api.github.com.json")
}

// runOpenAPICacheBench (-scenario openapi-cache): the proxied GET with
// `cache 1h` on its source, over hot distinct ids, answered from the
// result cache, next to Caddy's `respond` with a body as long as the
// tool's answer; alternating rounds, as the cache scenario does for a DB
// tool.
//
// It also prints the process's CPU time per request on each side (the
// load driver runs in the process too, the same client for both): unlike
// requests/s, that does not move with other work on the machine.
// cpuProfile, if set, receives a CPU profile of the rounds.
func runOpenAPICacheBench(ctx context.Context, clients int, d time.Duration, hot int, version, cpuProfile string) {
	upstream, spec, cleanup := itemsAPI()
	defer cleanup()
	port := freePort()
	load := func(bodySize int) string {
		return loadSite(port, fmt.Sprintf(`	respond /respond "%s" 200
	mcp /mcp {
		source api openapi %s {
			base_url http://%s/v1
			retries 0
			cache 1h
		}
	}`, strings.Repeat("x", bodySize), spec, upstream))
	}
	base := load(0)
	probe, err := openSession(ctx, base+"/mcp", version)
	check(err)
	body, _, err := probe.post(ctx, itemCallBody(1, 1))
	check(err)
	load(len(body))
	transport.CloseIdleConnections() // the reload closed the probe's connection
	defer caddy.Stop()
	sessions := make([]*session, clients)
	for i := range sessions {
		sessions[i], err = openSession(ctx, base+"/mcp", version)
		check(err)
	}
	for id := int64(1); id <= int64(hot); id++ { // warm: every later call is a hit
		_, _, err := sessions[0].post(ctx, itemCallBody(id, id))
		check(err)
	}
	fmt.Printf("edgemcp openapi cache bench: %d clients, %s per side, %d hot ids, %d-byte answers, GOMAXPROCS=%d\n",
		clients, d, hot, len(body), runtime.GOMAXPROCS(0))
	client := &http.Client{Transport: transport}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		check(err)
		check(pprof.StartCPUProfile(f))
	}
	respond, hits := &stats{}, &stats{}
	var respondCost, hitsCost cost
	for range benchRounds {
		st, c := driveCost(clients, d/benchRounds, func(r *rand.Rand) error {
			return postRespond(ctx, client, base+"/respond", itemCallBody(r.Int64(), r.Int64N(int64(hot))+1))
		})
		respond.merge(st)
		respondCost.merge(c)
		st, c = driveCost(clients, d/benchRounds, func(r *rand.Rand) error {
			s := sessions[r.IntN(clients)]
			res, _, err := s.post(ctx, itemCallBody(s.seq.Add(1), r.Int64N(int64(hot))+1))
			if err == nil && !bytes.Contains(res, []byte(`"structuredContent"`)) {
				err = fmt.Errorf("api_getItem: %.200s", res)
			}
			return err
		})
		hits.merge(st)
		hitsCost.merge(c)
	}
	pprof.StopCPUProfile()
	respond.print("caddy respond")
	hits.print("edgemcp openapi tool, cache hits")
	fmt.Printf("ratio: cached openapi tool/respond = %.2f (target ≥ 0.7)\n", hits.rps()/respond.rps())
	printCostRatio("respond", respondCost, "cache hit", hitsCost)
}
