package caddymodule

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/pipeline"
)

// petsUpstream is a real HTTP server behind the OpenAPI source: it serves
// the pet store and records the Authorization header of each request.
type petsUpstream struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
	paths []string
}

func newPetsUpstream(t *testing.T) *petsUpstream {
	t.Helper()
	u := &petsUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.auths = append(u.auths, r.Header.Get("Authorization"))
		u.paths = append(u.paths, r.URL.Path)
		u.mu.Unlock()
		id, ok := strings.CutPrefix(r.URL.Path, "/v1/pets/")
		if !ok || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		if id == "0" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"code": 404, "message": "no such pet"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if id == "nameless" { // outside the document's Pet, which requires a name
			io.WriteString(w, `{"id": 7}`)
			return
		}
		fmt.Fprintf(w, `{"id": 7, "name": %q}`, "pet "+id)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *petsUpstream) lastAuth() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.auths) == 0 {
		return ""
	}
	return u.auths[len(u.auths)-1]
}

func (u *petsUpstream) requests() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.paths)
}

// TestOpenAPISourceEndToEnd: an OpenAPI document becomes namespaced tools
// served by Caddy; calls reach the upstream with the injected credential on
// both transport paths, under the tool's name and its aliases; tools/list
// shows each tool once, without an output schema (output_schema is off by
// default).
func TestOpenAPISourceEndToEnd(t *testing.T) {
	up := newPetsUpstream(t)
	t.Setenv("EDGEMCP_TEST_PETS_TOKEN", "pets-secret-token")
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source pets openapi ../sources/openapi/testdata/petstore.yaml {
			base_url %s/v1
			credential bearer {env.EDGEMCP_TEST_PETS_TOKEN}
			exclude getPhoto
			retries 0
		}
	}
}`, up.URL))

	c := g.mcpClient(t)
	list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]mcp.Tool{}
	for _, tl := range list.Tools {
		byName[tl.Name] = tl
	}
	show, ok := byName["pets_showPetById"]
	if !ok || byName["pets_getPhoto"].Name != "" || byName["showPetById"].Name != "" || byName["pets.showPetById"].Name != "" {
		t.Fatalf("tools/list: %v", keys(byName))
	}
	if show.OutputSchema.Type != "" {
		t.Errorf("pets_showPetById outputSchema, not asked for: %+v", show.OutputSchema)
	}
	if show.Annotations.ReadOnlyHint == nil || !*show.Annotations.ReadOnlyHint {
		t.Errorf("GET without readOnlyHint: %+v", show.Annotations)
	}

	// mcp-go's client, by name and by alias.
	for _, name := range []string{"pets_showPetById", "showPetById", "pets.showPetById"} {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, map[string]any{"petId": "7"}
		res, err := c.CallTool(context.Background(), req)
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		if sc, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(sc), `"name":"pet 7"`) {
			t.Errorf("%s: structuredContent %s", name, sc)
		}
		if got := up.lastAuth(); got != "Bearer pets-secret-token" {
			t.Errorf("%s: the upstream saw Authorization %q", name, got)
		}
	}

	// The raw session takes the direct path; with _meta the call goes
	// through mcp-go's dispatcher. Both accept the alias.
	s := g.rawSession(t, "2025-06-18")
	direct := directCount()
	if r := s.call(t, "showPetById", map[string]any{"petId": "8"}).tool(t); !strings.Contains(r.Content[0].Text, "pet 8") {
		t.Errorf("direct path, alias: %+v", r)
	}
	resp, _ := s.post(t, `{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"pets.showPetById","arguments":{"petId":"9"},"_meta":{"progressToken":"p1"}}}`)
	if r := resp.tool(t); !strings.Contains(r.Content[0].Text, "pet 9") {
		t.Errorf("mcp-go path, alias: %+v", r)
	}
	if directCount()-direct != 1 {
		t.Errorf("%d calls took the direct path, want 1", directCount()-direct)
	}

	// A caller cannot set the credential's header, and an upstream error
	// is -32000 with its status.
	before := up.requests()
	r := s.call(t, "pets_showPetById", map[string]any{"petId": "7", "Authorization": "Bearer mine"})
	if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, `unknown input "Authorization"`) {
		t.Errorf("Authorization as an argument: %+v", r.Error)
	}
	if up.requests() != before {
		t.Error("the refused call reached the upstream")
	}
	r = s.call(t, "pets_showPetById", map[string]any{"petId": "0"})
	if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, `HTTP 404 Not Found: {"code": 404, "message": "no such pet"}`) {
		t.Errorf("upstream 404: %+v", r.Error)
	}
}

// TestSourceLoadErrors: a source that cannot load fails the config, naming
// the source and what is wrong; the Caddyfile refuses bad source lines at
// adapt time with the line.
func TestSourceLoadErrors(t *testing.T) {
	g := &gateway{t: t, port: freePort(t)}
	caddyMu.Lock()
	err := g.load(`SITE {
	mcp /mcp {
		source pets openapi ./no-such-spec.yaml
	}
}`)
	_ = caddy.Stop()
	caddyMu.Unlock()
	if err == nil || !strings.Contains(err.Error(), `source "pets"`) || !strings.Contains(err.Error(), "no-such-spec.yaml") {
		t.Errorf("missing document: %v", err)
	}
	for _, tc := range []struct{ cfg, want string }{
		{"source", "usage: source <name> <type>"},
		{"source pets", `source "pets": missing type`},
		{"source pets nosuch x", `unknown type "nosuch"`},
		{"source pe.ts openapi x", "must match"},
		{"source pets openapi", "usage: source <name> openapi"},
		{"source pets openapi x {\n\t\t\tcredential magic\n\t\t}", `unknown kind "magic"`},
		{"source pets openapi x {\n\t\t\tinclude [a-\n\t\t}", "include:"},
		{"source pets openapi x {\n\t\t\tretries many\n\t\t}", "retries must be"},
		{"source pets openapi x\n\t\tsource pets openapi y", `source "pets" declared twice`},
	} {
		got := adaptForTest(t, ":8080 {\n\tmcp {\n\t\t"+tc.cfg+"\n\t}\n}\n")
		if !strings.HasPrefix(got, "error: ") || !strings.Contains(got, tc.want) || !strings.Contains(got, "Caddyfile:") {
			t.Errorf("%q: %s, want an error with %q and the line", tc.cfg, got, tc.want)
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// echoSource is a third party's source, as xcaddy --with would add it:
// a Caddy module in its own package (here, this test file) registered as
// mcp.sources.echo_test, used from a Caddyfile with nothing else to wire.
type echoSource struct {
	Word string `json:"word"`
}

func init() { caddy.RegisterModule(echoSource{}) }

func (echoSource) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.sources.echo_test", New: func() caddy.Module { return new(echoSource) }}
}

func (e *echoSource) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next()
	if !d.AllArgs(&e.Word) {
		return d.ArgErr()
	}
	return nil
}

func (e *echoSource) Tools(namespace string) ([]*pipeline.Tool, error) {
	word := e.Word
	return []*pipeline.Tool{{
		Name:        pipeline.ToolName(namespace, "say"),
		Description: "Says the word",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Aliases:     []string{namespace + ".say"},
		Executor: pipeline.ExecutorFunc(func(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
			return &pipeline.Result{Value: word}, nil
		}),
	}}, nil
}

// TestThirdPartySource: a source module from another package plugs in
// through the mcp.sources namespace alone.
func TestThirdPartySource(t *testing.T) {
	g := startGateway(t, `SITE {
	mcp /mcp {
		source greet echo_test hello
	}
}`)
	s := g.rawSession(t, "2025-06-18")
	for _, name := range []string{"greet_say", "greet.say"} {
		if r := s.call(t, name, map[string]any{}).tool(t); r.Content[0].Text != `"hello"` {
			t.Errorf("%s: %+v", name, r)
		}
	}
}

// TestOpenAPISourceRefresh: a document that changes while the gateway
// runs changes its tools without a reload: a session's open stream gets
// notifications/tools/list_changed, tools/list and tools/call see the new
// operation; a document that stops loading keeps the tools that worked.
func TestOpenAPISourceRefresh(t *testing.T) {
	srv, setDoc := liveSpecServer(t)

	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source live openapi %s/spec.json {
			base_url %s
			refresh 100ms
		}
	}
}`, srv.URL, srv.URL))
	s := g.rawSession(t, "2025-06-18")
	events := openStream(t, g.URL, s.session, "2025-06-18")

	if r := s.call(t, "live_getB", map[string]any{}); r.Error == nil || r.Error.Code != -32601 {
		t.Fatalf("live_getB before the change: %+v", r)
	}
	setDoc(specWithB)
	waitFor(t, "notifications/tools/list_changed on the session's stream", func() bool {
		return strings.Contains(events(), "notifications/tools/list_changed")
	})
	list, _ := s.post(t, `{"jsonrpc":"2.0","id":90,"method":"tools/list"}`)
	if !strings.Contains(string(list.Result), `"live_getB"`) {
		t.Fatalf("tools/list after the change: %s", list.Result)
	}
	for _, name := range []string{"live_getB", "getB", "live.getB"} {
		if r := s.call(t, name, map[string]any{}).tool(t); !strings.Contains(r.Content[0].Text, `"/b"`) {
			t.Errorf("%s: %+v", name, r)
		}
	}

	// A broken document: the tools that worked stay.
	setDoc(`{"openapi":"3.0.3","paths":`)
	time.Sleep(300 * time.Millisecond) // several refreshes fail; nothing to wait for but time
	if r := s.call(t, "live_getB", map[string]any{}).tool(t); !strings.Contains(r.Content[0].Text, `"/b"`) {
		t.Errorf("after a broken refresh: %+v", r)
	}
}

// openStream opens the session's GET stream and returns a function that
// reads what has arrived so far.
func openStream(t *testing.T, url, session, version string) func() string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", version)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %s", res.Status)
	}
	var mu sync.Mutex
	var got strings.Builder
	go func() {
		defer res.Body.Close()
		buf := make([]byte, 4096)
		for {
			n, err := res.Body.Read(buf)
			mu.Lock()
			got.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return got.String()
	}
}

// TestOpenAPISourceCache: `cache <ttl> respect` caches GET results in the
// endpoint's result cache (one upstream request for two calls), except
// what the upstream marks no-store; other methods only when
// cache_operations names them.
func TestOpenAPISourceCache(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.Method+" "+r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/fresh") {
			w.Header().Set("Cache-Control", "no-store")
		}
		io.WriteString(w, `{"id": 1, "name": "Rex"}`)
	}))
	defer srv.Close()
	count := func(k string) int { mu.Lock(); defer mu.Unlock(); return hits[k] }

	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source pets openapi ../sources/openapi/testdata/petstore.yaml {
			base_url %s/v1
			cache 1h respect
			cache_operations createPet
		}
	}
}`, srv.URL))
	s := g.rawSession(t, "2025-06-18")
	for range 2 {
		s.call(t, "pets_showPetById", map[string]any{"petId": "7"}).tool(t)
		s.call(t, "pets_showPetById", map[string]any{"petId": "fresh"}).tool(t)
		s.call(t, "pets_updatePet", map[string]any{"petId": "7", "body": map[string]any{"name": "Rex"}}).tool(t)
		s.call(t, "pets_createPet", map[string]any{"body": map[string]any{"name": "Rex"}}).tool(t)
	}
	if n := count("GET /v1/pets/7"); n != 1 {
		t.Errorf("cached GET reached the upstream %d times, want 1", n)
	}
	if n := count("GET /v1/pets/fresh"); n != 2 {
		t.Errorf("no-store GET reached the upstream %d times, want 2", n)
	}
	if n := count("PUT /v1/pets/7"); n != 2 {
		t.Errorf("PUT reached the upstream %d times, want 2", n)
	}
	if n := count("POST /v1/pets"); n != 1 {
		t.Errorf("POST named in cache_operations reached the upstream %d times, want 1", n)
	}
}

// TestOpenAPISourcePerCallerCredential: each verified caller reaches the
// upstream with its own secret, looked up by its subject; results are
// cached per identity, never served to another caller; a caller with no
// secret on file is refused before any request.
func TestOpenAPISourcePerCallerCredential(t *testing.T) {
	up := newPetsUpstream(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "tokens.txt"), "alice tok-alice\nbob tok-bob\n")
	t.Setenv("EDGEMCP_TEST_KEY_ALICE", "alice-key-0123456789abcdef")
	t.Setenv("EDGEMCP_TEST_KEY_BOB", "bob-key-0123456789abcdefgh")
	t.Setenv("EDGEMCP_TEST_KEY_EVE", "eve-key-0123456789abcdefghi")
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		auth keys api_key {
			key {env.EDGEMCP_TEST_KEY_ALICE} {
				subject alice
			}
			key {env.EDGEMCP_TEST_KEY_BOB} {
				subject bob
			}
			key {env.EDGEMCP_TEST_KEY_EVE} {
				subject eve
			}
		}
		default_auth keys
		source pets openapi ../sources/openapi/testdata/petstore.yaml {
			base_url %s/v1
			credential per_caller bearer {
				file %s
			}
			cache 1h
		}
	}
}`, up.URL, filepath.Join(dir, "tokens.txt")))
	call := func(key string) rpcResponse {
		s := &rawSession{url: g.URL, version: "2025-06-18"}
		hdr := map[string]string{"X-API-Key": key}
		init := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, s.version)
		_, h := s.postWith(t, init, hdr)
		s.session = h.Get("Mcp-Session-Id")
		r, _ := s.postWith(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pets_showPetById","arguments":{"petId":"7"}}}`, hdr)
		return r
	}
	for _, who := range []string{"alice", "bob"} {
		key := map[string]string{"alice": "alice-key-0123456789abcdef", "bob": "bob-key-0123456789abcdefgh"}[who]
		before := up.requests()
		call(key).tool(t)
		if got := up.lastAuth(); got != "Bearer tok-"+who || up.requests() != before+1 {
			t.Errorf("%s: upstream saw %q after %d requests", who, got, up.requests()-before)
		}
		// Cached for this caller: no second request.
		call(key).tool(t)
		if up.requests() != before+1 {
			t.Errorf("%s: the second call reached the upstream", who)
		}
	}
	before := up.requests()
	r := call("eve-key-0123456789abcdefghi")
	if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "no upstream credential for this caller") || up.requests() != before {
		t.Errorf("eve: %+v, %d requests", r.Error, up.requests()-before)
	}
}

// TestOpenAPISourceRefreshTypeScriptSDK: the official TypeScript SDK client
// holds a session while the document changes: it receives
// notifications/tools/list_changed on its stream, lists the new operation
// and calls it.
func TestOpenAPISourceRefreshTypeScriptSDK(t *testing.T) {
	dir := nodeDir(t)
	srv, setDoc := liveSpecServer(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source live openapi %s/spec.json {
			base_url %s
			refresh 100ms
		}
	}
}`, srv.URL, srv.URL))
	script := filepath.Join(t.TempDir(), "script.json")
	writeFile(t, script, `[
		{"op":"list"},
		{"op":"signal","text":"ready"},
		{"op":"wait_tools_changed","timeoutMs":30000},
		{"op":"list"},
		{"op":"call","name":"live_getB","arguments":{}}
	]`)
	cmd := exec.Command(node22(t, dir), filepath.Join(dir, "sdk-client.mjs"), g.URL, script)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Change the document once the client has its session and tool list.
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if sc.Text() == "ready" {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatal("the SDK client did not get ready")
	}
	setDoc(specWithB)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("sdk-client: %v\n%s", err, stdout.String())
	}
	var run struct {
		Steps []sdkStep `json:"steps"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &run); err != nil || len(run.Steps) != 5 {
		t.Fatalf("sdk-client output %s: %v", stdout.String(), err)
	}
	if e := run.Steps[2].Error; e != nil {
		t.Fatalf("waiting for list_changed: %+v", e)
	}
	if before, after := string(run.Steps[0].Tools), string(run.Steps[3].Tools); strings.Contains(before, "live_getB") || !strings.Contains(after, "live_getB") {
		t.Errorf("tools before %s\nafter %s", before, after)
	}
	if r := run.Steps[4]; r.Error != nil || r.Result == nil || !strings.Contains(r.Result.Content[0].Text, `"/b"`) {
		t.Errorf("call of the new tool: %+v %+v", r.Error, r.Result)
	}
}

// TestOpenAPISourceErrorModeResult: under error_mode result an upstream
// failure is an isError result with the status in _meta, as a success
// carries it.
func TestOpenAPISourceErrorModeResult(t *testing.T) {
	up := newPetsUpstream(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		error_mode result
		source pets openapi ../sources/openapi/testdata/petstore.yaml {
			base_url %s/v1
		}
	}
}`, up.URL))
	s := g.rawSession(t, "2025-06-18")
	for petID, want := range map[string]string{"0": `"status":404`, "7": `"status":200`} {
		r := s.call(t, "pets_showPetById", map[string]any{"petId": petID})
		if r.Error != nil || !strings.Contains(string(r.Result), `"edgemcp/http":{`+want+`}`) {
			t.Errorf("petId %s: %+v %s", petID, r.Error, r.Result)
		}
		if petID == "0" && !strings.Contains(string(r.Result), `"isError":true`) {
			t.Errorf("404 is not an isError result: %s", r.Result)
		}
	}
}

// TestOpenAPISourceSetFromIdentity: `set X-Request-Tag {{ auth.claims.tenant }}`
// sends each verified caller's tenant claim as the header: the recording
// upstream sees the verified value, no argument can set or change it, a
// caller without the claim is refused in authentication, and results are
// cached per caller.
func TestOpenAPISourceSetFromIdentity(t *testing.T) {
	idp := newTestIdP(t)
	var mu sync.Mutex
	var tags []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tags = append(tags, r.Header.Get("X-Request-Tag"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"pets": [], "tag": %q}`, r.Header.Get("X-Request-Tag"))
	}))
	defer up.Close()
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		%s
		source pets openapi ../sources/openapi/testdata/petstore.yaml {
			base_url %s/v1
			set X-Request-Tag {{ auth.claims.tenant }}
			cache 1h
		}
	}
}`, idp.defaultAuth(), up.URL))
	call := func(token string, args map[string]any) rpcResponse {
		s := authSession(t, g, "2025-06-18", map[string]string{"Authorization": "Bearer " + token})
		a, _ := json.Marshal(args)
		r, _ := s.postWith(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pets_listPets","arguments":%s}}`, a), map[string]string{"Authorization": "Bearer " + token})
		return r
	}
	acme := idp.token(t, "alice", "", map[string]any{"tenant": "acme"}, time.Hour)
	globex := idp.token(t, "bob", "", map[string]any{"tenant": "globex"}, time.Hour)
	for _, tc := range []struct{ token, want string }{{acme, "acme"}, {globex, "globex"}, {acme, "acme"}} {
		r := call(tc.token, map[string]any{"limit": 1})
		if r.Error != nil || !strings.Contains(string(r.Result), `\"tag\": \"`+tc.want+`\"`) {
			t.Errorf("%s: %+v %s", tc.want, r.Error, r.Result)
		}
	}
	mu.Lock()
	if strings.Join(tags, ",") != "acme,globex" { // the third call was acme's cached answer
		t.Errorf("the upstream saw tags %q", tags)
	}
	mu.Unlock()
	if r := call(acme, map[string]any{"X-Request-Tag": "globex"}); r.Error == nil || !strings.Contains(r.Error.Message, `unknown input "X-Request-Tag"`) {
		t.Errorf("the header as an argument: %+v", r.Error)
	}
	noTenant := idp.token(t, "carol", "", nil, time.Hour)
	if r := call(noTenant, map[string]any{}); r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "authentication") || !strings.Contains(r.Error.Message, `"tenant"`) {
		t.Errorf("no tenant claim: %+v", r.Error)
	}
}

// TestOpenAPISourceSetNeedsAuth: without default_auth there is no
// verified caller to take a value from: the load fails, saying so.
func TestOpenAPISourceSetNeedsAuth(t *testing.T) {
	if got := loadError(t, `SITE {
	mcp /mcp {
		source pets openapi ../sources/openapi/testdata/petstore.yaml {
			base_url http://127.0.0.1:1/v1
			set X-Request-Tag {{ auth.claims.tenant }}
		}
	}
}`); !strings.Contains(got, "no default_auth") {
		t.Errorf("set from identity without auth: %s", got)
	}
}

// loadError loads cfg in a gateway of its own and returns the load error.
func loadError(t *testing.T, cfg string) string {
	t.Helper()
	g := &gateway{t: t, port: freePort(t)}
	caddyMu.Lock()
	err := g.load(cfg)
	_ = caddy.Stop()
	caddyMu.Unlock()
	if err == nil {
		return ""
	}
	return err.Error()
}

// specWithB is liveSpecServer's document after the change: getB added.
const specWithB = `{"openapi":"3.0.3","info":{"title":"t","version":"2"},"paths":{
	"/a":{"get":{"operationId":"getA","responses":{"200":{"description":"ok"}}}},
	"/b":{"get":{"operationId":"getB","responses":{"200":{"description":"ok"}}}}}}`

// liveSpecServer serves a document at /spec.json that the test can change
// (one operation, getA, until setDoc), and answers every other path with
// {"path": ...}.
func liveSpecServer(t *testing.T) (*httptest.Server, func(string)) {
	t.Helper()
	var mu sync.Mutex
	doc := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{
		"/a":{"get":{"operationId":"getA","responses":{"200":{"description":"ok"}}}}}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/spec.json" {
			mu.Lock()
			defer mu.Unlock()
			io.WriteString(w, doc)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"path": %q}`, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv, func(d string) { mu.Lock(); doc = d; mu.Unlock() }
}
