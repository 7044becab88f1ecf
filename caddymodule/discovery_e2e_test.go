package caddymodule

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/pipeline"
)

// catalogSource is a test source with many tools (mcp.sources.shelf_test
// <n>): tool i is "item<i>" described with words of its own, and the test
// can add one more ("restock") while the gateway runs, as a refreshed
// document would.
type catalogSource struct {
	N int `json:"n"`
}

var catalogLive struct {
	sync.Mutex
	restock bool
	changed func()
}

func init() { caddy.RegisterModule(catalogSource{}) }

func (catalogSource) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.sources.shelf_test", New: func() caddy.Module { return new(catalogSource) }}
}

func (c *catalogSource) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next()
	var n string
	if !d.AllArgs(&n) {
		return d.ArgErr()
	}
	_, err := fmt.Sscan(n, &c.N)
	return err
}

func (c *catalogSource) OnChange(changed func()) {
	catalogLive.Lock()
	catalogLive.changed = changed
	catalogLive.Unlock()
}

func shelfTool(namespace, name, desc string) *pipeline.Tool {
	return &pipeline.Tool{
		Name: pipeline.ToolName(namespace, name), Original: name, Description: desc,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"quantity":{"type":"integer"}}}`),
		Executor: pipeline.ExecutorFunc(func(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
			return &pipeline.Result{Value: map[string]any{"tool": name, "quantity": call.Inputs["quantity"]}}, nil
		}),
	}
}

func (c *catalogSource) Tools(namespace string) ([]*pipeline.Tool, error) {
	var tools []*pipeline.Tool
	for i := 0; i < c.N; i++ {
		tools = append(tools, shelfTool(namespace, fmt.Sprintf("item%d", i), fmt.Sprintf("Shelf %d of the warehouse, aisle %d.", i, i%7)))
	}
	catalogLive.Lock()
	defer catalogLive.Unlock()
	if catalogLive.restock {
		tools = append(tools, shelfTool(namespace, "restock", "Orders more crates of oranges from the orchard."))
	}
	return tools, nil
}

const (
	discoveryAliceKey = "alice-key-0123456789abcdef"
	discoveryBobKey   = "bob-key-0123456789abcdefgh"
)

// discoveryCaddyfile: 200 catalog tools, two declared tools, one of them
// (ops_restart) for alice's key only; search mode with one pin.
func discoveryCaddyfile(t testing.TB, discovery string) string {
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		connector lite sqlite %s
		auth keys api_key {
			header X-API-Key
			key %s {
				subject alice
				scope ops
			}
			key %s {
				subject bob
			}
		}
		tool ops_restart {
			description "Restarts the payment worker queue"
			use lite
			statement "SELECT 'restarted' AS status"
			auth keys {
				scope ops
			}
		}
		tool public_count {
			description "Counts the visitors"
			use lite
			statement "SELECT 42 AS n"
		}
		source shop shelf_test 200
		%s
	}
}`, filepath.Join(t.TempDir(), "lite.db"), discoveryAliceKey, discoveryBobKey, discovery)
}

func resetCatalog(t *testing.T) {
	catalogLive.Lock()
	catalogLive.restock = false
	catalogLive.Unlock()
	t.Cleanup(func() { catalogLive.Lock(); catalogLive.restock = false; catalogLive.Unlock() })
}

func listedNames(tools []mcp.Tool) []string {
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

type foundTools struct {
	Tools []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Source      string `json:"source"`
	} `json:"tools"`
}

func (f foundTools) names() []string {
	var out []string
	for _, t := range f.Tools {
		out = append(out, t.Name)
	}
	return out
}

// TestDiscoverySearchMCPGo drives search mode with mcp-go's client: tools/list
// is the meta-tools and the pin; search → describe → call_tool works, for
// names and aliases; a caller that may not call a tool does not find it and
// call_tool refuses it as a direct call does.
func TestDiscoverySearchMCPGo(t *testing.T) {
	resetCatalog(t)
	g := startGateway(t, discoveryCaddyfile(t, "discovery search {\n\t\t\tpin public_count\n\t\t}"))
	ctx := context.Background()
	alice := g.mcpClient(t, transport.WithHTTPHeaders(map[string]string{"X-API-Key": discoveryAliceKey}))
	bob := g.mcpClient(t, transport.WithHTTPHeaders(map[string]string{"X-API-Key": discoveryBobKey}))

	list, err := alice.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got := listedNames(list.Tools); !slices.Equal(got, []string{"call_tool", "describe_tool", "public_count", "search_tools"}) {
		t.Fatalf("tools/list in search mode: %v", got)
	}

	call := func(c clientT, name string, args map[string]any) (string, error) {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return "", err
		}
		if res.IsError || len(res.Content) != 1 {
			return "", fmt.Errorf("result %+v", res)
		}
		return res.Content[0].(mcp.TextContent).Text, nil
	}
	search := func(c clientT, args map[string]any) foundTools {
		t.Helper()
		text, err := call(c, "search_tools", args)
		if err != nil {
			t.Fatalf("search_tools %v: %v", args, err)
		}
		var f foundTools
		if err := json.Unmarshal([]byte(text), &f); err != nil {
			t.Fatalf("search_tools answer %s: %v", text, err)
		}
		return f
	}

	// Search finds a declared tool by words of its description, a source's
	// tool by its own words, and keeps to a source when asked.
	if f := search(alice, map[string]any{"query": "restart the payment queue"}); len(f.Tools) == 0 || f.Tools[0].Name != "ops_restart" {
		t.Errorf("alice, restart payment queue: %v", f.names())
	}
	if f := search(alice, map[string]any{"query": "shelf 117", "limit": 3}); len(f.Tools) == 0 || len(f.Tools) > 3 || f.Tools[0].Name != "shop_item117" || f.Tools[0].Source != "shop" {
		t.Errorf("alice, shelf 117: %+v", f)
	}
	if f := search(alice, map[string]any{"query": "visitors"}); len(f.Tools) != 1 || f.Tools[0].Name != "public_count" {
		t.Errorf("visitors: %v", f.names())
	}
	if f := search(alice, map[string]any{"query": "visitors", "source": "shop"}); len(f.Tools) != 0 {
		t.Errorf("visitors in source shop: %v", f.names())
	}
	if f := search(alice, map[string]any{"query": "aisle 3", "source": "shop", "limit": 50}); len(f.Tools) != 50 || !strings.HasSuffix(f.Tools[0].Description, "aisle 3.") {
		t.Errorf("aisle 3 in shop: %+v", f)
	}

	// describe_tool shows the whole tool.
	text, err := call(alice, "describe_tool", map[string]any{"name": "shop_item117"})
	var described struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Source      string          `json:"source"`
	}
	if err != nil || json.Unmarshal([]byte(text), &described) != nil || described.Name != "shop_item117" ||
		!strings.Contains(string(described.InputSchema), `"quantity"`) || described.Source != "shop" {
		t.Errorf("describe_tool shop_item117: %s %v", text, err)
	}

	// call_tool runs the tool, by its name and by every alias.
	for _, name := range []string{"shop_item117", "shop.item117", "shop/item117", "item117"} {
		text, err := call(alice, "call_tool", map[string]any{"name": name, "arguments": map[string]any{"quantity": 9007199254740993}})
		if err != nil || text != `{"quantity":9007199254740993,"tool":"item117"}` {
			t.Errorf("call_tool %s: %s %v", name, text, err)
		}
	}
	if text, err := call(alice, "call_tool", map[string]any{"name": "ops_restart"}); err != nil || !strings.Contains(text, "restarted") {
		t.Errorf("alice, call_tool ops_restart: %s %v", text, err)
	}
	// A tool not listed is still callable by name.
	if text, err := call(alice, "shop_item5", map[string]any{}); err != nil || !strings.Contains(text, `"item5"`) {
		t.Errorf("direct call of an unlisted tool: %s %v", text, err)
	}

	// Bob may not call ops_restart: no hit, not described, refused.
	if f := search(bob, map[string]any{"query": "restart the payment queue"}); slices.Contains(f.names(), "ops_restart") {
		t.Errorf("bob finds ops_restart: %v", f.names())
	}
	if _, err := call(bob, "describe_tool", map[string]any{"name": "ops_restart"}); err == nil || !strings.Contains(err.Error(), `tool "ops_restart" not found`) {
		t.Errorf("bob, describe_tool ops_restart: %v", err)
	}
	if list, err := bob.ListTools(ctx, mcp.ListToolsRequest{}); err != nil || slices.Contains(listedNames(list.Tools), "ops_restart") {
		t.Errorf("bob's tools/list: %v %v", list, err)
	}
}

type clientT = interface {
	CallTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error)
}

// TestDiscoverySearchErrors reads the exact JSON-RPC answers: call_tool of
// a tool the caller may not call is refused with the code and message of a
// direct call; an unknown tool is -32601 either way; bad meta-tool
// arguments are -32000 at validation. And list_changed still reaches the
// session when the registry swaps, the new tool searchable at once.
func TestDiscoverySearchErrors(t *testing.T) {
	resetCatalog(t)
	g := startGateway(t, discoveryCaddyfile(t, "discovery auto 100"))
	s := g.rawSession(t, "2025-06-18")
	bob := map[string]string{"X-API-Key": discoveryBobKey}
	post := func(id int, name string, args any) rpcResponse {
		a, _ := json.Marshal(args)
		r, _ := s.postWith(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, a), bob)
		return r
	}
	direct := post(1, "ops_restart", map[string]any{})
	via := post(2, "call_tool", map[string]any{"name": "ops_restart", "arguments": map[string]any{}})
	if direct.Error == nil || direct.Error.Code != -32000 || via.Error == nil || *via.Error != *direct.Error {
		t.Errorf("bob: direct %+v, through call_tool %+v", direct.Error, via.Error)
	}
	cases := []struct {
		name string
		args any
		code int
		msg  string
	}{
		{"call_tool", map[string]any{"name": "nope"}, -32601, `tool resolution: tool "nope" not found`},
		{"describe_tool", map[string]any{"name": "nope"}, -32601, `tool resolution: tool "nope" not found`},
		{"describe_tool", map[string]any{"name": "ops_restart"}, -32601, `tool resolution: tool "ops_restart" not found`},
		{"search_tools", map[string]any{"query": ""}, -32000, "input validation: query is required: words of what the tool does"},
		{"search_tools", map[string]any{"query": "x", "limit": 51}, -32000, "input validation: limit must be a whole number from 1 to 50"},
		{"call_tool", map[string]any{"name": "public_count", "arguments": []int{1}}, -32000, "input validation: arguments must be an object"},
	}
	for i, c := range cases {
		r := post(10+i, c.name, c.args)
		if r.Error == nil || r.Error.Code != c.code || r.Error.Message != c.msg {
			t.Errorf("%s %v: %+v, want %d %q", c.name, c.args, r.Error, c.code, c.msg)
		}
	}

	events := openStream(t, g.URL, s.session, "2025-06-18")
	catalogLive.Lock()
	catalogLive.restock = true
	changed := catalogLive.changed
	catalogLive.Unlock()
	changed()
	waitFor(t, "notifications/tools/list_changed after the swap", func() bool {
		return strings.Contains(events(), "notifications/tools/list_changed")
	})
	r := post(30, "search_tools", map[string]any{"query": "oranges orchard"})
	var f foundTools
	if r.Error != nil || json.Unmarshal([]byte(r.tool(t).Content[0].Text), &f) != nil || len(f.Tools) == 0 || f.Tools[0].Name != "shop_restock" {
		t.Errorf("search after the swap: %+v %s", r.Error, r.Result)
	}
}

// TestDiscoveryAutoThreshold: discovery auto lists every tool while the
// registry is at most the threshold, and searches above it.
func TestDiscoveryAutoThreshold(t *testing.T) {
	resetCatalog(t)
	var g *gateway
	// 202 tools; ops_restart is not listed to a caller without a key.
	for _, c := range []struct {
		auto int
		want int // tools listed
	}{{500, 201}, {202, 201}, {201, 3}} {
		cfg := discoveryCaddyfile(t, fmt.Sprintf("discovery auto %d", c.auto))
		if g == nil {
			g = startGateway(t, cfg)
		} else if err := g.load(cfg); err != nil {
			t.Fatal(err)
		}
		s := g.rawSession(t, "2025-06-18")
		r, _ := s.post(t, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
		var list struct {
			Tools []mcp.Tool `json:"tools"`
		}
		_ = json.Unmarshal(r.Result, &list)
		if len(list.Tools) != c.want {
			t.Errorf("discovery auto %d with 202 tools: %d listed, want %d", c.auto, len(list.Tools), c.want)
		}
	}
}

// TestDiscoverySearchTypeScriptSDK: the official TypeScript SDK client in
// search mode: it lists the meta-tools and the pin, searches, describes and
// calls through call_tool, is refused through call_tool what its key may
// not call, and gets notifications/tools/list_changed when the registry
// swaps, after which the new tool is found.
func TestDiscoverySearchTypeScriptSDK(t *testing.T) {
	dir := nodeDir(t)
	resetCatalog(t)
	g := startGateway(t, discoveryCaddyfile(t, "discovery search {\n\t\t\tpin public_count\n\t\t}"))
	script := filepath.Join(t.TempDir(), "script.json")
	writeFile(t, script, `[
		{"op":"list"},
		{"op":"call","name":"search_tools","arguments":{"query":"shelf 117","limit":2}},
		{"op":"call","name":"describe_tool","arguments":{"name":"shop.item117"}},
		{"op":"call","name":"call_tool","arguments":{"name":"shop_item117","arguments":{"quantity":3}}},
		{"op":"call","name":"call_tool","arguments":{"name":"ops_restart","arguments":{}}},
		{"op":"call","name":"search_tools","arguments":{"query":"restart payment worker"}},
		{"op":"signal","text":"ready"},
		{"op":"wait_tools_changed","timeoutMs":30000},
		{"op":"call","name":"search_tools","arguments":{"query":"oranges from the orchard"}}
	]`)
	cmd := exec.Command(node22(t, dir), filepath.Join(dir, "sdk-client.mjs"), g.URL, script)
	cmd.Env = append(os.Environ(), `EDGEMCP_HEADERS={"X-API-Key":"`+discoveryBobKey+`"}`)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
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
	catalogLive.Lock()
	catalogLive.restock = true
	changed := catalogLive.changed
	catalogLive.Unlock()
	changed()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("sdk-client: %v\n%s", err, stdout.String())
	}
	var run struct {
		Steps []sdkStep `json:"steps"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &run); err != nil || len(run.Steps) != 9 {
		t.Fatalf("sdk-client output %s: %v", stdout.String(), err)
	}
	var listed []mcp.Tool
	_ = json.Unmarshal(run.Steps[0].Tools, &listed)
	if got := listedNames(listed); !slices.Equal(got, []string{"call_tool", "describe_tool", "public_count", "search_tools"}) {
		t.Errorf("tools/list: %v", got)
	}
	text := func(i int) string {
		s := run.Steps[i]
		if s.Error != nil || s.Result == nil || len(s.Result.Content) != 1 {
			t.Errorf("step %d: %+v %+v", i, s.Error, s.Result)
			return ""
		}
		return s.Result.Content[0].Text
	}
	found := func(i int) []string {
		var f foundTools
		_ = json.Unmarshal([]byte(text(i)), &f)
		return f.names()
	}
	if got := found(1); len(got) == 0 || got[0] != "shop_item117" {
		t.Errorf("search shelf 117: %v", got)
	}
	if got := text(2); !strings.Contains(got, `"name":"shop_item117"`) || !strings.Contains(got, `"quantity"`) {
		t.Errorf("describe_tool shop.item117: %s", got)
	}
	if got := text(3); got != `{"quantity":3,"tool":"item117"}` {
		t.Errorf("call_tool shop_item117: %s", got)
	}
	if e := run.Steps[4].Error; e == nil || e.Code != -32000 || e.Message != "authentication: not permitted to call this tool" {
		t.Errorf("bob, call_tool ops_restart: %+v", e)
	}
	if got := found(5); slices.Contains(got, "ops_restart") {
		t.Errorf("bob finds ops_restart: %v", got)
	}
	if e := run.Steps[7].Error; e != nil {
		t.Fatalf("waiting for list_changed: %+v", e)
	}
	if got := found(8); len(got) == 0 || got[0] != "shop_restock" {
		t.Errorf("search after the swap: %v", got)
	}
}

// TestDiscoveryLoadErrors: a pin naming no tool (and no source that could
// bring it) and a tool named like a meta-tool fail the load, saying which.
func TestDiscoveryLoadErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "lite.db")
	for _, c := range []struct{ tool, discovery, want string }{
		{"stats", "discovery search {\n\t\t\tpin nope\n\t\t}", `discovery: pin "nope": no such tool`},
		{"search_tools", "discovery search", `discovery search: a declared tool is named "search_tools", the name of a meta-tool`},
	} {
		msg := loadError(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		connector lite sqlite %s
		tool %s {
			description "Counts"
			use lite
			statement "SELECT 1 AS n"
		}
		%s
	}
}`, db, c.tool, c.discovery))
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s: load error %q, want %q", c.discovery, msg, c.want)
		}
	}
}
