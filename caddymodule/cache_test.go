package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
)

// cacheCaddyfile is an mcp endpoint on dsn with the given cache block and
// tools over the cache_e2e schema.
func cacheCaddyfile(site, dsn, cacheBlock, tools string) string {
	return fmt.Sprintf(`%s {
	mcp /mcp {
		connector main postgres %s {
			max_conns 8
			statement_timeout 5s
		}
		%s
		%s
	}
}`, site, dsn, cacheBlock, tools)
}

const itemTool = `
		tool %s {
			description "An item by id"
			use main
			statement "SELECT id, name FROM cache_e2e.items WHERE id = {{ inputs.id }}"
			input id int required
			%s
		}`

const countedTool = `
		tool counted {
			description "Counts its executions in cache_e2e.calls"
			use main
			statement "SELECT cache_e2e.counted({{ inputs.x }}) AS x"
			input x int required
			%s
		}`

// itemName calls an item tool and returns the name it answered.
func itemName(t *testing.T, s *rawSession, tool string, id int) string {
	t.Helper()
	rows := s.call(t, tool, map[string]any{"id": id}).tool(t).rows(t)
	if len(rows) != 1 {
		t.Fatalf("%s: %d rows", tool, len(rows))
	}
	return rows[0]["name"].(string)
}

// Hit after miss with the row changed underneath; two TTLs in one cache;
// default_ttl and cache off.
func TestCacheTTLs(t *testing.T) {
	cacheSchema(t)
	tools := fmt.Sprintf(itemTool, "item-short", "cache 2s") +
		fmt.Sprintf(itemTool, "item-long", "cache 1h") +
		fmt.Sprintf(itemTool, "item-default", "") +
		fmt.Sprintf(itemTool, "item-off", "cache off")
	g := startGateway(t, cacheCaddyfile("SITE", postgresURL(t), "cache {\n\t\t\tdefault_ttl 1h\n\t\t}", tools))
	s := g.rawSession(t, "2025-11-25")
	all := []string{"item-short", "item-long", "item-default", "item-off"}
	for _, tool := range all {
		if got := itemName(t, s, tool, 1); got != "A" {
			t.Fatalf("%s: %q", tool, got)
		}
	}
	execSQL(t, testDB(t), `UPDATE cache_e2e.items SET name = 'B' WHERE id = 1`)

	want := map[string]string{"item-short": "A", "item-long": "A", "item-default": "A", "item-off": "B"}
	for _, tool := range all {
		if got := itemName(t, s, tool, 1); got != want[tool] {
			t.Errorf("right after the update, %s = %q, want %q", tool, got, want[tool])
		}
	}
	// The short entry expires: wait for it (a slow machine takes longer,
	// which must not matter), then the others still answer from the cache.
	waitFor(t, "item-short to expire", func() bool { return itemName(t, s, "item-short", 1) == "B" })
	want["item-short"] = "B"
	for _, tool := range all {
		if got := itemName(t, s, tool, 1); got != want[tool] {
			t.Errorf("after item-short expired, %s = %q, want %q", tool, got, want[tool])
		}
	}
	// Other inputs are other entries.
	if got := itemName(t, s, "item-long", 2); got != "A2" {
		t.Errorf("item-long id 2 = %q", got)
	}
}

// A reload that changes nothing about the cache keeps it; one that changes
// a tool's statement cannot serve the old statement's entries.
func TestCacheAcrossReloads(t *testing.T) {
	cacheSchema(t)
	cf := func(where string) string {
		return cacheCaddyfile("SITE", postgresURL(t), "", `
		tool item {
			description "An item by id"
			use main
			statement "SELECT id, name FROM cache_e2e.items WHERE id = {{ inputs.id }}`+where+`"
			input id int required
			cache 1h
		}`)
	}
	g := startGateway(t, cf(""))
	if got := itemName(t, g.rawSession(t, "2025-11-25"), "item", 1); got != "A" {
		t.Fatal(got)
	}
	execSQL(t, testDB(t), `UPDATE cache_e2e.items SET name = 'B' WHERE id = 1`)
	if got := itemName(t, reloadSession(t, g, cf("")), "item", 1); got != "A" {
		t.Fatalf("after an unchanged reload: %q, want the cached A", got)
	}
	if got := itemName(t, reloadSession(t, g, cf(" AND true")), "item", 1); got != "B" {
		t.Fatalf("after the statement changed: %q, want B", got)
	}
}

// 100 concurrent misses on one key run the statement once.
func TestCacheSingleFlight(t *testing.T) {
	cacheSchema(t)
	g := startGateway(t, cacheCaddyfile("SITE", postgresURL(t), "", fmt.Sprintf(countedTool, "cache 1h")))
	s := g.rawSession(t, "2025-11-25")

	const callers = 100
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := callRaw(s, 1000+i, "counted", `{"x": 7}`)
			switch {
			case err != nil:
				errs <- err
			case r.Error != nil:
				errs <- fmt.Errorf("call %d: %d %s", i, r.Error.Code, r.Error.Message)
			case !strings.Contains(string(r.Result), `[{\"x\":7}]`):
				errs <- fmt.Errorf("call %d: %s", i, r.Result)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := countedCalls(t); n != 1 {
		t.Fatalf("%d executions for %d concurrent calls, want 1", n, callers)
	}
}

// stale_if_error: with the database unreachable, an expired entry is
// served and the result's _meta says so; on both transport paths.
func TestCacheStaleIfError(t *testing.T) {
	cacheSchema(t)
	dsn, proxy := proxiedPostgres(t)
	tools := fmt.Sprintf(itemTool, "item", "cache 1s")
	g := startGateway(t, cacheCaddyfile("SITE", dsn, "cache {\n\t\t\tstale_if_error 1h\n\t\t}", tools))
	s := g.rawSession(t, "2025-11-25")
	if got := itemName(t, s, "item", 1); got != "A" {
		t.Fatal(got)
	}
	if m := cacheMeta(t, s.call(t, "item", map[string]any{"id": 1})); m != nil {
		t.Fatalf("a fresh hit carries _meta %v", m)
	}
	proxy.cut()
	// Fresh hits answer until the entry expires (1s); then the execution
	// fails and the expired entry is served, with _meta saying so.
	var r rpcResponse
	waitFor(t, "the entry to expire", func() bool {
		r = s.call(t, "item", map[string]any{"id": 1})
		return cacheMeta(t, r) != nil
	})
	if rows := r.tool(t).rows(t); rows[0]["name"] != "A" {
		t.Fatalf("stale rows %v", rows)
	}
	m := cacheMeta(t, r)
	if m["status"] != "stale" || m["age_seconds"] == nil {
		t.Fatalf("_meta %s", r.Result)
	}

	// mcp-go's client (protocol 2026-07-28, no session) is told it too.
	c := g.mcpClient(t)
	req := mcp.CallToolRequest{}
	req.Params.Name = "item"
	req.Params.Arguments = map[string]any{"id": 1}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta == nil || res.Meta.AdditionalFields["edgemcp/cache"] == nil {
		t.Fatalf("mcp-go path: _meta %+v", res.Meta)
	}

	// Nothing cached for id 2: the failure is the documented error.
	r = s.call(t, "item", map[string]any{"id": 2})
	if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "execution") {
		t.Fatalf("uncached call with the database down: %+v %s", r.Error, r.Result)
	}
}

// Two gateway instances (two mcp handlers, each with its own first level)
// share hits through the real Redis.
func TestCacheRedisSharedByTwoGateways(t *testing.T) {
	cacheSchema(t)
	rc := redisClient(t, testservices.RedisURL(t))
	prefix := fmt.Sprintf("edgemcp-cache-test-%d:", time.Now().UnixNano())
	t.Cleanup(func() { keysWithPrefix(t, rc, prefix, true) })
	// Identical settings would share one in-process cache (cachePools);
	// different sizes keep the two first levels apart, as on two nodes.
	block := "cache {\n\t\t\tredis %s\n\t\t\tkey_prefix %s\n\t\t\tmax_size %s\n\t\t}"
	blockA := fmt.Sprintf(block, testservices.RedisURL(t), prefix, "32MiB")
	blockB := fmt.Sprintf(block, testservices.RedisURL(t), prefix, "16MiB")
	tools := fmt.Sprintf(countedTool, "cache 1h")
	portB := freePort(t)
	siteB := fmt.Sprintf("http://:%d {\n\tbind 127.0.0.1\n", portB)
	cf := cacheCaddyfile("SITE", postgresURL(t), blockA, tools) + "\n" +
		strings.Replace(cacheCaddyfile("SITEB", postgresURL(t), blockB, tools), "SITEB {\n", siteB, 1)
	g := startGateway(t, cf)
	gB := &gateway{t: t, port: portB, URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", portB)}

	a, b := g.rawSession(t, "2025-11-25"), gB.rawSession(t, "2025-11-25")
	if r := a.call(t, "counted", map[string]any{"x": 1}).tool(t); r.Content[0].Text != `[{"x":1}]` {
		t.Fatalf("node A: %+v", r)
	}
	if keys := keysWithPrefix(t, rc, prefix, false); len(keys) != 1 || !strings.HasPrefix(keys[0], prefix+"counted:") {
		t.Fatalf("redis keys %v", keys)
	}
	if r := b.call(t, "counted", map[string]any{"x": 1}).tool(t); r.Content[0].Text != `[{"x":1}]` {
		t.Fatalf("node B: %+v", r)
	}
	if n := countedCalls(t); n != 1 {
		t.Fatalf("node B ran the statement again (%d executions): no shared hit", n)
	}
}

// Redis stopped: the gateway keeps serving from its first level and the
// database, without errors or long waits.
func TestCacheRedisDown(t *testing.T) {
	cacheSchema(t)
	url, kill := privateRedis(t)
	block := fmt.Sprintf("cache {\n\t\t\tredis %s\n\t\t\tredis_timeout 200ms\n\t\t}", url)
	cf := cacheCaddyfile("SITE", postgresURL(t), block, fmt.Sprintf(countedTool, "cache 1h"))
	g := startGateway(t, cf)
	s := g.rawSession(t, "2025-11-25")
	s.call(t, "counted", map[string]any{"x": 1}).tool(t)
	if keys := keysWithPrefix(t, redisClient(t, url), "edgemcp:", false); len(keys) != 1 {
		t.Fatalf("keys in the private redis: %v", keys)
	}
	kill()

	start := time.Now()
	for x := 1; x <= 3; x++ {
		if r := s.call(t, "counted", map[string]any{"x": x}).tool(t); r.Content[0].Text != fmt.Sprintf(`[{"x":%d}]`, x) {
			t.Fatalf("x=%d with Redis down: %+v", x, r)
		}
	}
	if n := countedCalls(t); n != 3 {
		t.Fatalf("%d executions, want 3 (x=1 from the first level)", n)
	}
	// Two statements of 0.3s ran; Redis being down must add at most a
	// timeout (200ms), not hang each call: the bound is loose on purpose.
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("three calls with Redis down took %s", d)
	}

	// A Redis that is down when the config loads is not a config error
	// (another timeout: a new client and a new cache).
	s = reloadSession(t, g, strings.Replace(cf, "redis_timeout 200ms", "redis_timeout 300ms", 1))
	for range 2 {
		if r := s.call(t, "counted", map[string]any{"x": 4}).tool(t); r.Content[0].Text != `[{"x":4}]` {
			t.Fatalf("after the reload: %+v", r)
		}
	}
	if n := countedCalls(t); n != 4 {
		t.Fatalf("%d executions, want 4 (the second x=4 from the first level)", n)
	}
}

// TestCacheRedisRestart: Redis stopped and started again (a private
// server, never the shared one): calls keep their answers throughout, and
// the second level is written to again within 5 s of Redis being back,
// without a reload (the breaker tries it again after 2 s).
func TestCacheRedisRestart(t *testing.T) {
	cacheSchema(t)
	srv := testservices.StartRedis(t)
	rc := redisClient(t, srv.URL)
	block := fmt.Sprintf("cache {\n\t\t\tredis %s\n\t\t\tredis_timeout 200ms\n\t\t}", srv.URL)
	g := startGateway(t, cacheCaddyfile("SITE", postgresURL(t), block, fmt.Sprintf(countedTool, "cache 1h")))
	s := g.rawSession(t, "2025-11-25")
	call := func(x int) {
		t.Helper()
		if r := s.call(t, "counted", map[string]any{"x": x}).tool(t); r.Content[0].Text != fmt.Sprintf(`[{"x":%d}]`, x) {
			t.Fatalf("x=%d: %+v", x, r)
		}
	}
	call(1)
	if keys := keysWithPrefix(t, rc, "edgemcp:", false); len(keys) != 1 {
		t.Fatalf("keys before the restart: %v", keys)
	}
	srv.Stop()
	call(2)

	srv.Start() // empty: no persistence
	back := time.Now()
	for x := 3; len(keysWithPrefix(t, rc, "edgemcp:", false)) == 0; x++ {
		if time.Since(back) > 5*time.Second {
			t.Fatalf("nothing written to Redis %s after it is back", time.Since(back))
		}
		call(x)
	}
	t.Logf("second level written again %s after Redis was back", time.Since(back).Round(time.Millisecond))
}

// A caller never sees another caller's cached rows when the tool has an
// auth stage; `cache shared` opts out. The engine is provisioned as Caddy
// would, with a test-only authorizer that takes the subject from a header.
func TestCacheIdentityScopedKeys(t *testing.T) {
	cacheSchema(t)
	h := &Handler{
		Connectors: []ConnectorConfig{{Name: "main", Type: "postgres", DSN: postgresURL(t)}},
		Tools: []ToolConfig{
			{Name: "mine", Description: "scoped", Use: "main", Cache: &ToolCacheConfig{TTL: caddy.Duration(time.Hour)},
				Statement: "SELECT cache_e2e.counted({{ inputs.x }}) AS x, {{ inputs.x }}::text AS name", Inputs: []InputConfig{{Name: "x", Type: "int"}}},
			{Name: "ours", Description: "shared", Use: "main", Cache: &ToolCacheConfig{TTL: caddy.Duration(time.Hour), Shared: true},
				Statement: "SELECT cache_e2e.counted({{ inputs.x }}) AS x", Inputs: []InputConfig{{Name: "x", Type: "int"}}},
		},
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	if err := h.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	defer h.Cleanup()
	for _, tool := range h.tools().engine.Tools() {
		tool.Auth = headerAuth{}
	}
	call := func(tool, user string) string {
		t.Helper()
		info := &pipeline.RequestInfo{Header: http.Header{"X-User": {user}}}
		res, perr := h.tools().engine.Call(context.Background(), tool, map[string]any{"x": 5}, info)
		if perr != nil {
			t.Fatal(perr)
		}
		return fmt.Sprint(res.Value)
	}
	steps := []struct {
		tool, user string
		calls      int // executions so far
	}{
		{"mine", "alice", 1},
		{"mine", "alice", 1}, // alice's own entry
		{"mine", "bob", 2},   // never alice's
		{"mine", "bob", 2},
		{"ours", "alice", 3},
		{"ours", "bob", 3}, // shared
	}
	for i, s := range steps {
		call(s.tool, s.user)
		if n := countedCalls(t); n != s.calls {
			t.Fatalf("step %d (%s as %s): %d executions, want %d", i, s.tool, s.user, n, s.calls)
		}
	}
	if st := h.CacheStats(); st.Hits != 3 || st.Misses != 3 {
		t.Fatalf("stats %+v", st)
	}
}

// headerAuth is a test-only authorizer: the subject is the X-User header.
type headerAuth struct{}

func (headerAuth) Authorize(_ context.Context, call *pipeline.Call) (*pipeline.Identity, error) {
	return &pipeline.Identity{Subject: call.Request.Header.Get("X-User")}, nil
}

func TestCachePolicy(t *testing.T) {
	db := &pipeline.Tool{Name: "db", Executor: &pipeline.DBExecutor{}}
	script := &pipeline.Tool{Name: "script", Executor: scriptLike{}}
	def := &CacheConfig{DefaultTTL: caddy.Duration(time.Minute)}
	ttl := func(d time.Duration) *ToolCacheConfig { return &ToolCacheConfig{TTL: caddy.Duration(d)} }
	tests := []struct {
		name  string
		tool  *pipeline.Tool
		own   *ToolCacheConfig
		block *CacheConfig
		want  *pipeline.CachePolicy
		err   string
	}{
		{"db without default", db, nil, nil, nil, ""},
		{"db takes default_ttl", db, nil, def, &pipeline.CachePolicy{TTL: time.Minute}, ""},
		{"script ignores default_ttl", script, nil, def, nil, ""},
		{"script with its own ttl", script, ttl(time.Second), nil, &pipeline.CachePolicy{TTL: time.Second}, ""},
		{"own ttl wins", db, ttl(time.Second), def, &pipeline.CachePolicy{TTL: time.Second}, ""},
		{"off wins", db, &ToolCacheConfig{Off: true}, def, nil, ""},
		{"shared takes default_ttl", script, &ToolCacheConfig{Shared: true}, def, &pipeline.CachePolicy{TTL: time.Minute, Shared: true}, ""},
		{"shared without any ttl", db, &ToolCacheConfig{Shared: true}, nil, nil, "cache shared needs a ttl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cachePolicy(tt.tool, tt.own, tt.block)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// scriptLike stands for any executor that is not a DB statement.
type scriptLike struct{}

func (scriptLike) Execute(context.Context, *pipeline.Call) (*pipeline.Result, error) { return nil, nil }

// Through the real gateway: callers that differ in one claim only (two API
// keys of one subject with different scopes; two tokens of one subject and
// issuer with different tenants) never share a cached result, while a
// renewed token of the same caller (new iat, exp, jti) still hits. The
// handler answers with the claims it saw, so a leaked entry shows as the
// other caller's tenant or scope.
func TestCacheKeyIsTheWholeIdentity(t *testing.T) {
	cacheSchema(t)
	const keyRead, keyAdmin = "cache-test-key-read-0d9e1f", "cache-test-key-admin-6b2c7a"
	t.Setenv("EDGEMCP_CACHE_KEY_READ", keyRead)
	t.Setenv("EDGEMCP_CACHE_KEY_ADMIN", keyAdmin)
	idp := newTestIdP(t)
	dir := t.TempDir()
	whoami := filepath.Join(dir, "whoami.js")
	writeFile(t, whoami, `export default ({auth}) => ({subject: auth.subject, tenant: auth.claims.tenant ?? null, scope: auth.claims.scope ?? null})`)
	tools := fmt.Sprintf(`
		auth sso jwt {
			jwks_url %s
			issuer %s
			audience %s
		}
		auth keys api_key {
			key {env.EDGEMCP_CACHE_KEY_READ} {
				subject ci-bot
				scope reports:read
			}
			key {env.EDGEMCP_CACHE_KEY_ADMIN} {
				subject ci-bot
				scope reports:read reports:admin
			}
		}
		tool whoami-sso {
			description "The caller's tenant"
			handler %[4]s
			cache 1h
			auth sso
		}
		tool whoami-key {
			description "The caller's scopes"
			handler %[4]s
			cache 1h
			auth keys
		}
		tool counted-sso {
			description "Counts its executions"
			use main
			statement "SELECT cache_e2e.counted({{ inputs.x }}) AS x"
			input x int required
			cache 1h
			auth sso
		}`, idp.jwks.URL, authIssuer, authAudience, whoami)
	g := startGateway(t, cacheCaddyfile("SITE", postgresURL(t), "", tools))

	tenantToken := func(tenant string, ttl time.Duration) string {
		return idp.token(t, "alice", "mcp:use", map[string]any{"tenant": tenant, "jti": fmt.Sprint(tenant, ttl)}, ttl)
	}
	whoamiAs := func(tool string, header map[string]string) map[string]any {
		t.Helper()
		s := authSession(t, g, "2025-06-18", header)
		var v map[string]any
		res := s.call(t, tool).tool(t)
		if res.IsError || len(res.Content) == 0 {
			t.Fatalf("%s: %+v", tool, res)
		}
		if err := json.Unmarshal([]byte(res.Content[0].Text), &v); err != nil {
			t.Fatalf("%s: %q: %v", tool, res.Content[0].Text, err)
		}
		return v
	}
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

	acme, globex := tenantToken("acme", time.Hour), tenantToken("globex", time.Hour)
	for _, c := range []struct {
		tool, want string
		header     map[string]string
		field      string
	}{
		{"whoami-sso", "acme", bearer(acme), "tenant"},
		{"whoami-sso", "globex", bearer(globex), "tenant"}, // same sub and iss: not acme's entry
		{"whoami-key", "reports:read", map[string]string{"X-API-Key": keyRead}, "scope"},
		{"whoami-key", "reports:read reports:admin", map[string]string{"X-API-Key": keyAdmin}, "scope"},
		{"whoami-key", "reports:read", map[string]string{"X-API-Key": keyRead}, "scope"},
	} {
		if got := whoamiAs(c.tool, c.header); got[c.field] != c.want || got["subject"] == nil {
			t.Errorf("%s: answered %v, want %s %q", c.tool, got, c.field, c.want)
		}
	}

	counted := func(tok string) {
		t.Helper()
		s := authSession(t, g, "2025-06-18", bearer(tok))
		resp, _ := s.postWith(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"counted-sso","arguments":{"x":7}}}`, bearer(tok))
		if res := resp.tool(t); res.IsError {
			t.Fatalf("counted-sso: %+v", res)
		}
	}
	steps := []struct {
		name  string
		token string
		calls int
	}{
		{"acme", acme, 1},
		{"acme again", acme, 1},
		{"globex, same sub and iss", globex, 2},
		{"acme renewed (new iat, exp, jti)", tenantToken("acme", 2*time.Hour), 2},
	}
	for _, s := range steps {
		counted(s.token)
		if n := countedCalls(t); n != s.calls {
			t.Fatalf("%s: %d executions, want %d", s.name, n, s.calls)
		}
	}
}
