package cache

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// counter is an executor that returns its call count, so a test can tell
// a cached result from a fresh one.
type counter struct {
	n     atomic.Int64
	fail  atomic.Bool
	gate  chan struct{} // when set, Execute waits for it
	value func(n int64) any
}

func (c *counter) Execute(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
	n := c.n.Add(1)
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c.fail.Load() {
		return nil, &pipeline.PublicError{Public: "database unreachable"}
	}
	if c.value != nil {
		return &pipeline.Result{Value: c.value(n)}, nil
	}
	return &pipeline.Result{Value: map[string]any{"n": n, "inputs": call.Inputs}}, nil
}

type authorizer struct{}

func (authorizer) Authorize(context.Context, *pipeline.Call) (*pipeline.Identity, error) {
	return nil, nil
}

func newCache(t *testing.T, cfg Config) *Cache {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func cachedTool(c *Cache, name string, next pipeline.Executor, p pipeline.CachePolicy) *pipeline.Tool {
	t := &pipeline.Tool{Name: name, Source: "db", Executor: next, Cache: &p}
	t.Executor = c.Wrap(t)
	return t
}

// run calls the tool's (wrapped) executor and returns the "n" of the result
// and the cache status.
func run(t *testing.T, tool *pipeline.Tool, inputs map[string]any, id *pipeline.Identity) (int64, string, *pipeline.Result) {
	t.Helper()
	call := &pipeline.Call{Tool: tool, Inputs: inputs, Identity: id}
	res, err := tool.Executor.Execute(context.Background(), call)
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	b, _ := json.Marshal(res.Value)
	var v struct{ N int64 }
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("result %s: %v", b, err)
	}
	return v.N, call.CacheStatus, res
}

func TestHitMissExpiry(t *testing.T) {
	c := newCache(t, Config{MaxTTL: time.Second})
	exec := &counter{}
	short := cachedTool(c, "short", exec, pipeline.CachePolicy{TTL: 150 * time.Millisecond})
	in := map[string]any{"id": 1}

	steps := []struct {
		wait   time.Duration
		n      int64
		status string
	}{
		{0, 1, StatusMiss},
		{0, 1, StatusHit},
		{200 * time.Millisecond, 2, StatusMiss}, // expired: never served
		{0, 2, StatusHit},
	}
	for i, s := range steps {
		time.Sleep(s.wait)
		n, status, _ := run(t, short, in, nil)
		if n != s.n || status != s.status {
			t.Fatalf("step %d: n=%d status=%q, want n=%d status=%q", i, n, status, s.n, s.status)
		}
	}
	if n, status, _ := run(t, short, map[string]any{"id": 2}, nil); n != 3 || status != StatusMiss {
		t.Fatalf("other inputs: n=%d %s", n, status)
	}
	st := c.Stats()
	if st.Hits != 2 || st.Misses != 3 {
		t.Fatalf("stats %+v", st)
	}
}

func TestKeys(t *testing.T) {
	c := newCache(t, Config{})
	alice := &pipeline.Identity{Subject: "alice", Claims: map[string]any{"iss": "https://a.example"}}
	aliceB := &pipeline.Identity{Subject: "alice", Claims: map[string]any{"iss": "https://b.example"}}
	bob := &pipeline.Identity{Subject: "bob"}
	// Two API keys of one subject that differ only in their scopes.
	keyRead := &pipeline.Identity{Provider: "keys", Subject: "ci", Claims: map[string]any{"auth_method": "api_key", "scope": "read"}}
	keyAdmin := &pipeline.Identity{Provider: "keys", Subject: "ci", Claims: map[string]any{"auth_method": "api_key", "scope": "read admin"}}
	// Two tokens of one subject and issuer that differ only in their tenant.
	tok := func(tenant string, exp float64, jti string) *pipeline.Identity {
		return &pipeline.Identity{Provider: "sso", Subject: "alice", Claims: map[string]any{
			"iss": "https://a.example", "tenant": tenant, "aud": []any{"mcp"},
			"exp": exp, "iat": exp - 3600, "nbf": exp - 3600, "jti": jti,
		}}
	}
	acme, globex := tok("acme", 2e9, "t1"), tok("globex", 2e9, "t1")
	acmeRenewed := tok("acme", 2e9+3600, "t2")
	// The same subject and claims verified by another provider.
	otherProvider := &pipeline.Identity{Provider: "sso-staging", Subject: "alice", Claims: acme.Claims}
	in := map[string]any{"id": 1}

	tests := []struct {
		name     string
		shared   bool
		auth     bool
		first    *pipeline.Identity
		second   *pipeline.Identity
		wantSame bool
	}{
		{"auth scopes by subject", false, true, alice, bob, false},
		{"auth scopes by issuer", false, true, alice, aliceB, false},
		{"API keys differing in scope only", false, true, keyRead, keyAdmin, false},
		{"tokens differing in tenant only", false, true, acme, globex, false},
		{"renewed token (exp, iat, nbf, jti) hits", false, true, acme, acmeRenewed, true},
		{"provider name is part of the key", false, true, acme, otherProvider, false},
		{"same caller hits", false, true, alice, alice, true},
		{"shared ignores identity", true, true, alice, bob, true},
		{"identity without auth stage still scopes", false, false, alice, bob, false},
		{"anonymous callers share", false, true, nil, nil, true},
		{"anonymous never sees a caller's rows", false, true, alice, nil, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := cachedTool(c, "keys"+string(rune('a'+i)), &counter{}, pipeline.CachePolicy{TTL: time.Minute, Shared: tt.shared})
			if tt.auth {
				tool.Auth = authorizer{}
			}
			n1, _, _ := run(t, tool, in, tt.first)
			n2, _, _ := run(t, tool, in, tt.second)
			if (n1 == n2) != tt.wantSame {
				t.Fatalf("first n=%d second n=%d, want same=%v", n1, n2, tt.wantSame)
			}
		})
	}

	// Two tools with the same inputs never share entries.
	exec := &counter{}
	a := cachedTool(c, "same-a", exec, pipeline.CachePolicy{TTL: time.Minute})
	b := cachedTool(c, "same-b", exec, pipeline.CachePolicy{TTL: time.Minute})
	if n1, _, _ := run(t, a, in, nil); n1 != 1 {
		t.Fatal(n1)
	}
	if n2, status, _ := run(t, b, in, nil); n2 != 2 || status != StatusMiss {
		t.Fatalf("tool b served tool a's entry: n=%d %s", n2, status)
	}
}

// TestIdentityScopeCanonical: the identity part of the key is the same
// bytes whatever the claims' Go types and map order (a token read from the
// verified-token cache, a script's []string against a JWT's []any), so every
// node and every reload computes the same key; and the key never holds a
// claim or credential in clear.
func TestIdentityScopeCanonical(t *testing.T) {
	id := &pipeline.Identity{Provider: "sso", Subject: "alice", Claims: map[string]any{
		"tenant": "acme", "roles": []string{"b", "a"}, "n": int64(42),
		"org": map[string]any{"z": 1, "a": true}, "exp": 1.7e9, "jti": "x",
	}}
	got, ok := identityScope(id)
	if !ok {
		t.Fatal("not encodable")
	}
	const want = `{"provider":"sso","subject":"alice","claims":{"n":42,"org":{"a":true,"z":1},"roles":["b","a"],"tenant":"acme"}}`
	if string(got) != want {
		t.Fatalf("scope\n got %s\nwant %s", got, want)
	}
	// The same claims after a JSON round trip (float64 numbers, []any lists,
	// fresh maps) give the same bytes.
	raw, _ := json.Marshal(id.Claims)
	var back map[string]any
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := identityScope(&pipeline.Identity{Provider: "sso", Subject: "alice", Claims: back})
	if string(again) != want {
		t.Fatalf("after round trip %s", again)
	}

	c := newCache(t, Config{})
	const secret = "s3cr3t-claim-value"
	tool := cachedTool(c, "secretive", &counter{}, pipeline.CachePolicy{TTL: time.Minute})
	tool.Auth = authorizer{}
	x := tool.Executor.(*executor)
	key, err := x.key(context.Background(), &pipeline.Call{Tool: tool, Inputs: map[string]any{},
		Identity: &pipeline.Identity{Provider: "p", Subject: "s", Claims: map[string]any{"api_key": secret}}})
	if err != nil || key == "" || strings.Contains(key, secret) || strings.Contains(key, "api_key") {
		t.Fatalf("key %q err %v", key, err)
	}

	// A claim without a JSON form: the call runs, uncached.
	odd := &pipeline.Identity{Provider: "p", Subject: "s", Claims: map[string]any{"f": func() {}}}
	for want := int64(1); want <= 2; want++ {
		if n, status, _ := run(t, tool, map[string]any{}, odd); n != want || status != "" {
			t.Fatalf("odd claims: n=%d status=%q", n, status)
		}
	}
}

func TestSingleFlight(t *testing.T) {
	c := newCache(t, Config{})
	exec := &counter{gate: make(chan struct{})}
	tool := cachedTool(c, "flight", exec, pipeline.CachePolicy{TTL: time.Minute})

	const callers = 100
	var wg sync.WaitGroup
	results := make([]int64, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _, _ = run(t, tool, map[string]any{"id": 7}, nil)
		}()
	}
	// Let every caller join before the one execution finishes.
	deadline := time.Now().Add(5 * time.Second)
	for followers(c) != callers-1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	close(exec.gate)
	wg.Wait()
	if got := exec.n.Load(); got != 1 {
		t.Fatalf("%d executions for %d concurrent misses, want 1", got, callers)
	}
	for i, n := range results {
		if n != 1 {
			t.Fatalf("caller %d got n=%d", i, n)
		}
	}
	if st := c.Stats(); st.Misses != callers || st.Coalesced != callers-1 {
		t.Fatalf("stats %+v", st)
	}
}

// followers is how many callers wait on the running execution.
func followers(c *Cache) int {
	c.flights.mu.Lock()
	defer c.flights.mu.Unlock()
	n := 0
	for _, fc := range c.flights.calls {
		n += fc.followers
	}
	return n
}

func TestWaiterLeavesWithItsContext(t *testing.T) {
	c := newCache(t, Config{})
	exec := &counter{gate: make(chan struct{})}
	tool := cachedTool(c, "leave", exec, pipeline.CachePolicy{TTL: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := tool.Executor.Execute(ctx, &pipeline.Call{Tool: tool, Inputs: map[string]any{}})
		done <- err
	}()
	for exec.n.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: %v", err)
	}
	// The execution was not cancelled with its first caller: it completes
	// and its result is cached for the next one.
	close(exec.gate)
	for inFlight(c) {
		time.Sleep(time.Millisecond)
	}
	if n, status, _ := run(t, tool, map[string]any{}, nil); n != 1 || status != StatusHit {
		t.Fatalf("after the abandoned fill: n=%d %s", n, status)
	}
}

func TestStaleIfError(t *testing.T) {
	for _, window := range []time.Duration{0, time.Minute} {
		c := newCache(t, Config{StaleIfError: window})
		exec := &counter{}
		tool := cachedTool(c, "stale", exec, pipeline.CachePolicy{TTL: 50 * time.Millisecond})
		in := map[string]any{"id": 1}
		run(t, tool, in, nil)
		time.Sleep(80 * time.Millisecond)
		exec.fail.Store(true)

		call := &pipeline.Call{Tool: tool, Inputs: in}
		res, err := tool.Executor.Execute(context.Background(), call)
		if window == 0 {
			if err == nil || !strings.Contains(err.Error(), "database unreachable") {
				t.Fatalf("no stale window: res=%v err=%v", res, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("stale window: %v", err)
		}
		meta, _ := res.Meta[MetaKey].(map[string]any)
		if call.CacheStatus != StatusStale || meta["status"] != StatusStale {
			t.Fatalf("status %q meta %v", call.CacheStatus, res.Meta)
		}
		// An input never cached has nothing stale to serve.
		if _, err := tool.Executor.Execute(context.Background(), &pipeline.Call{Tool: tool, Inputs: map[string]any{"id": 2}}); err == nil {
			t.Fatal("uncached input served despite the failure")
		}
		if st := c.Stats(); st.StaleServes != 1 {
			t.Fatalf("stats %+v", st)
		}
	}
}

func TestPanicIsAnError(t *testing.T) {
	c := newCache(t, Config{})
	tool := cachedTool(c, "panics", panicky{}, pipeline.CachePolicy{TTL: time.Minute})
	_, err := tool.Executor.Execute(context.Background(), &pipeline.Call{Tool: tool})
	if err == nil || !strings.Contains(err.Error(), "panic: boom") {
		t.Fatalf("err = %v", err)
	}
}

type panicky struct{}

func (panicky) Execute(context.Context, *pipeline.Call) (*pipeline.Result, error) { panic("boom") }

func TestLargeResultsAreNotCached(t *testing.T) {
	c := newCache(t, Config{MaxSize: 1 << 20}) // one shard: entries up to 512 KiB
	big := strings.Repeat("x", 600<<10)
	exec := &counter{value: func(n int64) any { return map[string]any{"n": n, "pad": big} }}
	tool := cachedTool(c, "big", exec, pipeline.CachePolicy{TTL: time.Minute})
	run(t, tool, nil, nil)
	if n, _, _ := run(t, tool, nil, nil); n != 2 {
		t.Fatalf("a result larger than a shard was cached (n=%d)", n)
	}
}

func TestNativeAndMapperResults(t *testing.T) {
	c := newCache(t, Config{})
	native := json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)
	tool := cachedTool(c, "native", executorFunc(func() *pipeline.Result { return &pipeline.Result{Native: native} }), pipeline.CachePolicy{TTL: time.Minute})
	for range 2 {
		res, err := tool.Executor.Execute(context.Background(), &pipeline.Call{Tool: tool})
		if err != nil || string(res.Native) != string(native) || res.Value != nil {
			t.Fatalf("native: %+v %v", res, err)
		}
	}
	// An output mapper gets plain values from a hit, not JSON bytes.
	mapped := cachedTool(c, "mapped", &counter{}, pipeline.CachePolicy{TTL: time.Minute})
	mapped.OutputMapper = noMapper{}
	run(t, mapped, nil, nil)
	_, status, res := run(t, mapped, nil, nil)
	if _, ok := res.Value.(map[string]any); !ok || status != StatusHit {
		t.Fatalf("mapper input %T (%s)", res.Value, status)
	}
}

// TestCanonicalizedOnce: with Config.Canonicalize, a Native result is
// re-encoded once, when stored, and every answer from the entry (the miss
// that filled it and each hit) carries those bytes marked Canonical; a
// result the function declines is kept as it is, unmarked.
func TestCanonicalizedOnce(t *testing.T) {
	var calls int
	c := newCache(t, Config{Canonicalize: func(n json.RawMessage) (json.RawMessage, bool) {
		calls++
		if strings.Contains(string(n), "_meta") {
			return nil, false
		}
		return append(json.RawMessage("{\"canonical\":true,"), n[1:]...), true
	}})
	native := json.RawMessage(`{"content":[]}`)
	tool := cachedTool(c, "native", executorFunc(func() *pipeline.Result { return &pipeline.Result{Native: native} }), pipeline.CachePolicy{TTL: time.Minute})
	for i := range 3 {
		res, err := tool.Executor.Execute(context.Background(), &pipeline.Call{Tool: tool})
		if err != nil || string(res.Native) != `{"canonical":true,"content":[]}` || !res.Canonical {
			t.Fatalf("answer %d: %s canonical=%v %v", i, res.Native, res.Canonical, err)
		}
	}
	if calls != 1 {
		t.Errorf("canonicalized %d times", calls)
	}
	own := json.RawMessage(`{"_meta":{"x":1},"content":[]}`)
	declined := cachedTool(c, "own-meta", executorFunc(func() *pipeline.Result { return &pipeline.Result{Native: own} }), pipeline.CachePolicy{TTL: time.Minute})
	for range 2 {
		res, err := declined.Executor.Execute(context.Background(), &pipeline.Call{Tool: declined})
		if err != nil || string(res.Native) != string(own) || res.Canonical {
			t.Fatalf("declined: %s canonical=%v %v", res.Native, res.Canonical, err)
		}
	}
}

// TestVerbatimKeptAsSent: an MCP server's own result (Verbatim) is stored
// as it sent it, not canonicalized, and every answer from the entry is
// those bytes marked Verbatim, so that a hit is written as the call that
// filled the entry was.
func TestVerbatimKeptAsSent(t *testing.T) {
	c := newCache(t, Config{Canonicalize: func(json.RawMessage) (json.RawMessage, bool) {
		t.Error("a Verbatim result was canonicalized")
		return nil, false
	}})
	sent := json.RawMessage(`{"x-unmodelled":1,"content":[],"isError":false}`)
	tool := cachedTool(c, "verbatim", executorFunc(func() *pipeline.Result { return &pipeline.Result{Native: sent, Verbatim: true} }), pipeline.CachePolicy{TTL: time.Minute})
	for i := range 3 {
		res, err := tool.Executor.Execute(context.Background(), &pipeline.Call{Tool: tool})
		if err != nil || string(res.Native) != string(sent) || !res.Verbatim || res.Canonical {
			t.Fatalf("answer %d: %s verbatim=%v canonical=%v %v", i, res.Native, res.Verbatim, res.Canonical, err)
		}
	}
}

type executorFunc func() *pipeline.Result

func (f executorFunc) Execute(context.Context, *pipeline.Call) (*pipeline.Result, error) {
	return f(), nil
}

type noMapper struct{}

func (noMapper) Transform(_ context.Context, p map[string]any) (any, error) { return p, nil }

func TestEntryDecodeRejectsForeignValues(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("hello"), append([]byte{9}, make([]byte, headerLen)...)} {
		if _, ok := decodeEntry(b); ok {
			t.Errorf("decoded %q", b)
		}
	}
}

func inFlight(c *Cache) bool {
	c.flights.mu.Lock()
	defer c.flights.mu.Unlock()
	return len(c.flights.calls) > 0
}

func TestEvictionsAreCounted(t *testing.T) {
	c := newCache(t, Config{MaxSize: 1 << 20})
	pad := strings.Repeat("x", 100<<10)
	tool := cachedTool(c, "fill", &counter{value: func(n int64) any { return map[string]any{"n": n, "pad": pad} }},
		pipeline.CachePolicy{TTL: time.Hour})
	for i := range 30 { // 3 MB through a 1 MiB cache
		run(t, tool, map[string]any{"i": i}, nil)
	}
	if st := c.Stats(); st.Evictions == 0 {
		t.Fatalf("no evictions counted: %+v", st)
	}
	// The newest entry is still there.
	if n, status, _ := run(t, tool, map[string]any{"i": 29}, nil); n != 30 || status != StatusHit {
		t.Fatalf("newest entry: n=%d %s", n, status)
	}
}

// hinted returns results carrying the backend's caching hints.
type hinted struct {
	counter
	noStore bool
	maxAge  time.Duration
}

func (h *hinted) Execute(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
	res, err := h.counter.Execute(ctx, call)
	if err == nil {
		res.NoStore, res.MaxAge = h.noStore, h.maxAge
	}
	return res, err
}

// TestBackendCacheHints: a result the backend marks no-store is never
// cached; a max-age shorter than the tool's TTL shortens it for that entry
// (and a longer one does not lengthen it).
func TestBackendCacheHints(t *testing.T) {
	c := newCache(t, Config{MaxTTL: time.Hour})
	noStore := cachedTool(c, "nostore", &hinted{noStore: true}, pipeline.CachePolicy{TTL: time.Hour})
	for i := int64(1); i <= 2; i++ {
		if n, status, _ := run(t, noStore, nil, nil); n != i || status != StatusMiss {
			t.Fatalf("no-store call %d: n=%d %s", i, n, status)
		}
	}
	short := cachedTool(c, "maxage", &hinted{maxAge: 100 * time.Millisecond}, pipeline.CachePolicy{TTL: time.Hour})
	run(t, short, nil, nil)
	if _, status, _ := run(t, short, nil, nil); status != StatusHit {
		t.Fatalf("within max-age: %s", status)
	}
	waitUntil(t, func() bool { _, status, _ := run(t, short, nil, nil); return status == StatusMiss })
	long := cachedTool(c, "longage", &hinted{maxAge: time.Hour}, pipeline.CachePolicy{TTL: 100 * time.Millisecond})
	run(t, long, nil, nil)
	waitUntil(t, func() bool { _, status, _ := run(t, long, nil, nil); return status == StatusMiss })
}

// waitUntil polls cond for at most 10s.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
	}
}

// TestKeyFormat pins a key: the tool's name, ":" and the hex SHA-256 of
// the length-prefixed fields (name, source, inputs, and the identity).
// Nodes share keys through Redis, so a change here is a change of every
// key: nodes of two versions would miss each other's entries.
func TestKeyFormat(t *testing.T) {
	c := newCache(t, Config{})
	tool := cachedTool(c, "item", &counter{}, pipeline.CachePolicy{TTL: time.Minute})
	x := tool.Executor.(*executor)
	want := func(fields ...string) string {
		h := sha256.New()
		for _, f := range fields {
			var n [8]byte
			binary.BigEndian.PutUint64(n[:], uint64(len(f)))
			h.Write(n[:])
			h.Write([]byte(f))
		}
		return "item:" + hex.EncodeToString(h.Sum(nil))
	}
	got, err := x.key(context.Background(), &pipeline.Call{Tool: tool, Inputs: map[string]any{"id": 7, "b": "x"}})
	if w := want("item", "db", `{"b":"x","id":7}`); err != nil || got != w {
		t.Fatalf("anonymous key %q, want %q (%v)", got, w, err)
	}
	id := &pipeline.Identity{Provider: "p", Subject: "s"}
	got, err = x.key(context.Background(), &pipeline.Call{Tool: tool, Inputs: map[string]any{}, Identity: id})
	if w := want("item", "db", `{}`, "identity", `{"provider":"p","subject":"s","claims":{}}`); err != nil || got != w {
		t.Fatalf("identity key %q, want %q (%v)", got, w, err)
	}
}
