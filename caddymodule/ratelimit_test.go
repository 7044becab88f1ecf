package caddymodule

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

// limitCaddyfile is one site with a sqlite tool "count" whose block gets
// toolExtra, under an mcp block that gets endpointExtra.
func limitCaddyfile(t *testing.T, addr, endpointExtra, toolExtra string) string {
	seed, _ := filepath.Abs("../examples/data/demo.sql")
	db := filepath.Join(t.TempDir(), "limits.db")
	return fmt.Sprintf(`%s {
	mcp /mcp {
		%s
		connector lite sqlite %q {
			read_only
			seed %q
		}
		tool count {
			description "Counts customers"
			use lite
			statement "SELECT count(*) AS n FROM customers"
			%s
		}
	}
}
`, addr, endpointExtra, db, seed, toolExtra)
}

// keySession opens a raw session whose every request carries an API key.
func keySession(t *testing.T, url, key string) func(tool string) rpcResponse {
	t.Helper()
	s := &rawSession{url: url, version: "2025-06-18"}
	hdr := map[string]string{"X-API-Key": key}
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	r, h := s.postWith(t, init, hdr)
	if r.Error != nil {
		t.Fatalf("initialize: %+v", r.Error)
	}
	s.session = h.Get("Mcp-Session-Id")
	return func(tool string) rpcResponse {
		s.nextID++
		r, _ := s.postWith(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, s.nextID, tool), hdr)
		return r
	}
}

const twoKeys = `auth keys api_key {
			key alice-key-0123456789abcdef {
				subject alice
			}
			key bob-key-0123456789abcdefgh {
				subject bob
			}
		}
		default_auth keys`

// TestToolRateLimitPerSubject: each verified caller has its own counter;
// over it a call is -32000 "rate limited" with the delay, before the
// tool runs; another caller is not affected.
func TestToolRateLimitPerSubject(t *testing.T) {
	g := startGateway(t, limitCaddyfile(t, "SITE", twoKeys, "rate_limit 2 per 1h"))
	alice := keySession(t, g.URL, "alice-key-0123456789abcdef")
	bob := keySession(t, g.URL, "bob-key-0123456789abcdefgh")
	before := testutil.ToFloat64(telemetry.RateLimited.WithLabelValues("tool", "count"))
	for range 2 {
		alice("count").tool(t)
	}
	r := alice("count")
	if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "rate limited: retry in 30m") {
		t.Fatalf("alice's third call: %+v", r.Error)
	}
	bob("count").tool(t)
	if n := testutil.ToFloat64(telemetry.RateLimited.WithLabelValues("tool", "count")) - before; n != 1 {
		t.Errorf("edgemcp_rate_limited_total rose by %v, want 1", n)
	}
}

// TestEndpointRateLimit: over the endpoint's limit a request is HTTP 429
// with Retry-After, whatever it asks.
func TestEndpointRateLimit(t *testing.T) {
	g := startGateway(t, limitCaddyfile(t, "SITE", "rate_limit 3 per 1h by ip", ""))
	s := g.rawSession(t, "2025-06-18") // initialize and initialized: 2 requests
	s.call(t, "count", map[string]any{}).tool(t)
	r, hdr := s.post(t, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
	if r.Status != 429 || hdr.Get("Retry-After") == "" || r.Error == nil || !strings.Contains(r.Error.Message, "rate limited") {
		t.Fatalf("4th request: %d %+v Retry-After %q", r.Status, r.Error, hdr.Get("Retry-After"))
	}
}

// slowToolGateway serves a Postgres tool "slow" that sleeps s seconds,
// with endpointExtra in the mcp block and toolExtra in the tool's; app is
// the application_name its connections carry (waitSleeping).
func slowToolGateway(t *testing.T, endpointExtra, toolExtra string) (*gateway, string) {
	testDB(t)
	app := appName(t)
	dsn := withParams(t, postgresURL(t), "application_name", app)
	return startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		%s
		connector pg postgres %q
		tool slow {
			description "Sleeps"
			use pg
			statement "SELECT pg_sleep({{ inputs.s }}) IS NULL AS slept"
			input s float required
			%s
		}
	}
}`, endpointExtra, dsn, toolExtra)), app
}

// TestMaxConcurrent: beyond max_concurrent running calls a call is
// answered "busy" at once instead of queueing.
func TestMaxConcurrent(t *testing.T) {
	g, app := slowToolGateway(t, "", "max_concurrent 1")
	s := g.rawSession(t, "2025-06-18")
	var wg sync.WaitGroup
	wg.Add(1)
	var first callResult
	go func() { defer wg.Done(); first = s.callAsync(100, "slow", map[string]any{"s": 2}) }()
	waitSleeping(t, app, 1)
	second := s.callAsync(101, "slow", map[string]any{"s": 0})
	if second.err != nil || second.code != -32000 || !strings.Contains(second.message, "busy: 1 calls of this tool are running (max_concurrent)") {
		t.Errorf("second call: %+v", second)
	}
	wg.Wait()
	if first.err != nil || first.code != 0 {
		t.Errorf("first call: %+v", first)
	}
	if r := s.callAsync(102, "slow", map[string]any{"s": 0}); r.err != nil || r.code != 0 {
		t.Errorf("after the first ended: %+v", r)
	}
}

// TestRateLimitSharedByNodes: two gateway nodes (two handlers on two
// ports) with one rate_limit_redis count a limit together; with the Redis
// down each node limits alone, and the fallback is counted.
func TestRateLimitSharedByNodes(t *testing.T) {
	prefix := testservices.RedisPrefix(t)
	redisURL := testservices.RedisURL(t)
	g := startGateway(t, "")
	other := freePort(t)
	store := fmt.Sprintf("rate_limit_redis %s %s", redisURL, prefix)
	cfg := limitCaddyfile(t, fmt.Sprintf("http://:%d", g.port), store, "rate_limit 3 per 1h by tool") +
		limitCaddyfile(t, fmt.Sprintf("http://:%d", other), store, "rate_limit 3 per 1h by tool")
	if err := g.load(bindLoopback(cfg)); err != nil {
		t.Fatal(err)
	}
	a := g.rawSession(t, "2025-06-18")
	b := (&gateway{t: t, URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", other)}).rawSession(t, "2025-06-18")
	a.call(t, "count", map[string]any{}).tool(t)
	b.call(t, "count", map[string]any{}).tool(t)
	a.call(t, "count", map[string]any{}).tool(t)
	if r := b.call(t, "count", map[string]any{}); r.Error == nil || !strings.Contains(r.Error.Message, "rate limited") {
		t.Fatalf("4th call across the nodes: %+v", r.Error)
	}

	// Redis down: the limit holds per node, and the fallback is counted.
	fell := testutil.ToFloat64(telemetry.RateLimitFallbacks)
	down := fmt.Sprintf("rate_limit_redis redis://127.0.0.1:%d/0 %s", freePort(t), prefix)
	if err := g.load(bindLoopback(limitCaddyfile(t, fmt.Sprintf("http://:%d", g.port), down, "rate_limit 1 per 1h by tool"))); err != nil {
		t.Fatal(err)
	}
	a = g.rawSession(t, "2025-06-18")
	a.call(t, "count", map[string]any{}).tool(t)
	if r := a.call(t, "count", map[string]any{}); r.Error == nil || !strings.Contains(r.Error.Message, "rate limited") {
		t.Errorf("with Redis down: %+v", r.Error)
	}
	if testutil.ToFloat64(telemetry.RateLimitFallbacks) < fell+2 {
		t.Errorf("fallbacks not counted")
	}
}

// bindLoopback keeps every site of a test config on the loopback.
func bindLoopback(cfg string) string {
	return strings.ReplaceAll(cfg, " {\n\tmcp /mcp {", " {\n\tbind 127.0.0.1\n\tmcp /mcp {")
}

// TestRateLimitCaddyfileErrors name the line.
func TestRateLimitCaddyfileErrors(t *testing.T) {
	for _, tc := range []struct{ cfg, want string }{
		{"rate_limit 10", "usage: rate_limit <n> per <duration>"},
		{"rate_limit 0 per 1m", `"0" is not a positive number`},
		{"rate_limit 5 per soon", `"soon" is not a positive duration`},
		{"rate_limit 5 per 1m by planet", `by "planet"`},
		{"rate_limit_redis", "usage: rate_limit_redis"},
	} {
		got := adaptForTest(t, ":8080 {\n\tmcp {\n\t\t"+tc.cfg+"\n\t}\n}\n")
		if !strings.Contains(got, tc.want) || !strings.Contains(got, "Caddyfile:3") {
			t.Errorf("%q: %s", tc.cfg, got)
		}
	}
	got := adaptForTest(t, ":8080 {\n\tmcp {\n\t\tmax_concurrent 0\n\t}\n}\n")
	if !strings.Contains(got, `max_concurrent must be a positive whole number, got "0"`) || !strings.Contains(got, "Caddyfile:3") {
		t.Errorf("endpoint max_concurrent: %s", got)
	}
	got = adaptForTest(t, ":8080 {\n\tmcp {\n\t\ttool x {\n\t\t\tdescription \"x\"\n\t\t\tmax_concurrent none\n\t\t}\n\t}\n}\n")
	if !strings.Contains(got, "max_concurrent must be a positive whole number") || !strings.Contains(got, "Caddyfile:5") {
		t.Errorf("max_concurrent: %s", got)
	}
}

// TestEndpointMaxConcurrent: with the endpoint's max_concurrent requests
// in flight, any further POST is answered 503 with Retry-After before MCP
// sees it, on the direct path (a plain tools/call) and on mcp-go's (a
// tools/list, a call with _meta) alike; an open GET stream takes no
// place; once the running call ends, requests are served again.
func TestEndpointMaxConcurrent(t *testing.T) {
	g, app := slowToolGateway(t, "max_concurrent 1", "")
	s := g.rawSession(t, "2025-06-18")

	// A notification stream is open all along: it must not hold the place.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	stream.Header.Set("Accept", "text/event-stream")
	stream.Header.Set("Mcp-Session-Id", s.session)
	stream.Header.Set("Mcp-Protocol-Version", s.version)
	opened := make(chan int, 1)
	go func() {
		res, err := http.DefaultClient.Do(stream)
		if err != nil {
			opened <- 0
			return
		}
		opened <- res.StatusCode
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}()
	if code := <-opened; code != http.StatusOK {
		t.Fatalf("GET stream: status %d", code)
	}
	s.call(t, "slow", map[string]any{"s": 0}).tool(t)

	before := testutil.ToFloat64(telemetry.RateLimited.WithLabelValues("concurrency", ""))
	var wg sync.WaitGroup
	wg.Add(1)
	var first callResult
	go func() { defer wg.Done(); first = s.callAsync(100, "slow", map[string]any{"s": 2}) }()
	waitSleeping(t, app, 1)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":101,"method":"tools/call","params":{"name":"slow","arguments":{"s":0}}}`,
		`{"jsonrpc":"2.0","id":102,"method":"tools/call","params":{"name":"slow","arguments":{"s":0},"_meta":{"progressToken":"p"}}}`,
		`{"jsonrpc":"2.0","id":103,"method":"tools/list"}`,
	} {
		r, hdr := s.post(t, body)
		if r.Status != http.StatusServiceUnavailable || hdr.Get("Retry-After") != "1" || r.Error == nil ||
			r.Error.Code != -32000 || r.Error.Message != "busy: 1 requests are being served (max_concurrent)" {
			t.Errorf("%s while full: %d %+v Retry-After %q", body, r.Status, r.Error, hdr.Get("Retry-After"))
		}
	}
	if n := testutil.ToFloat64(telemetry.RateLimited.WithLabelValues("concurrency", "")) - before; n != 3 {
		t.Errorf("edgemcp_rate_limited_total{scope=concurrency,tool=\"\"} rose by %v, want 3", n)
	}
	wg.Wait()
	if first.err != nil || first.code != 0 {
		t.Errorf("first call: %+v", first)
	}
	s.call(t, "slow", map[string]any{"s": 0}).tool(t)
}
