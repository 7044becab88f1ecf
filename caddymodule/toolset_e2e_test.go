//go:build linux

package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
)

// toolsetClient opens an mcp-go client session at the toolset path of g.
func toolsetClient(t *testing.T, g *gateway, name string) *client.Client {
	t.Helper()
	at := *g
	at.URL = g.URL + "/" + name
	return at.mcpClient(t)
}

// toolsetSession opens a raw session at the toolset path of g.
func toolsetSession(t *testing.T, g *gateway, name string) *rawSession {
	t.Helper()
	at := *g
	at.URL = g.URL + "/" + name
	return at.rawSession(t, "2025-06-18")
}

// TestToolsetsShareOneStdioChild: two toolsets over one stdio MCP source
// (the MCP project's server-everything) start one child between them and
// the endpoint; each lists only the tools it selects, through mcp-go's
// client; a tool outside a toolset, by its gateway name or its upstream
// alias, is refused there exactly as a tool that does not exist; a
// session opened at one path is refused at the others.
func TestToolsetsShareOneStdioChild(t *testing.T) {
	node, script := everything(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source every mcp stdio %s %s stdio {
			required
		}
		toolset talk {
			sources every
			tools every_echo
		}
		toolset sums {
			tools every_get-sum every_get-env
		}
	}
}`, node, script))
	child := mcpChild(t) // fails on a second server-everything child
	if child == 0 {
		t.Fatal("no server-everything child process")
	}

	all := listNames(t, g.mcpClient(t))
	for _, want := range []string{"every_echo", "every_get-sum", "every_get-env", "every_get-tiny-image"} {
		if !slices.Contains(all, want) {
			t.Fatalf("the endpoint lacks %s: %v", want, all)
		}
	}
	talk, sums := toolsetClient(t, g, "talk"), toolsetClient(t, g, "sums")
	if got := listNames(t, talk); !slices.Equal(got, []string{"every_echo"}) {
		t.Errorf("talk lists %v, want [every_echo]", got)
	}
	if got := listNames(t, sums); !slices.Equal(got, []string{"every_get-env", "every_get-sum"}) {
		t.Errorf("sums lists %v, want [every_get-env every_get-sum]", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	call := func(c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, error) {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		return c.CallTool(ctx, req)
	}
	if r, err := call(talk, "every_echo", map[string]any{"message": "hi"}); err != nil || r.IsError || r.Content[0].(mcp.TextContent).Text != "Echo: hi" {
		t.Errorf("talk every_echo: %+v %v", r, err)
	}
	if r, err := call(sums, "every_get-sum", map[string]any{"a": 2, "b": 40}); err != nil || r.IsError || !strings.Contains(r.Content[0].(mcp.TextContent).Text, "42") {
		t.Errorf("sums every_get-sum: %+v %v", r, err)
	}
	if _, err := call(talk, "every_get-sum", map[string]any{"a": 1, "b": 1}); err == nil {
		t.Error("talk ran every_get-sum, a tool it does not list")
	}

	// The exact refusal: the one a tool that does not exist gets.
	s := toolsetSession(t, g, "talk")
	unknown := s.call(t, "no-such-tool", map[string]any{})
	if unknown.Error == nil || unknown.Error.Code != -32601 {
		t.Fatalf("talk: an unknown tool answers %+v, want -32601", unknown)
	}
	for _, name := range []string{"every_get-sum", "get-sum", "every_get-tiny-image"} {
		got := s.call(t, name, map[string]any{"a": 1, "b": 1})
		if got.Error == nil || got.Error.Code != unknown.Error.Code ||
			got.Error.Message != strings.Replace(unknown.Error.Message, "no-such-tool", name, 1) {
			t.Errorf("talk %s: %+v, want the unknown tool's %+v", name, got.Error, unknown.Error)
		}
	}
	if r := s.call(t, "echo", map[string]any{"message": "alias"}).tool(t); r.Content[0].Text != "Echo: alias" {
		t.Errorf("talk echo (the upstream's name, an alias): %+v", r)
	}

	// A session belongs to the path it was opened at.
	for _, path := range []string{"/mcp", "/mcp/sums"} {
		other := &rawSession{url: fmt.Sprintf("http://127.0.0.1:%d%s", g.port, path), session: s.session, version: s.version}
		res, _ := other.exchange(t, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"every_get-sum","arguments":{"a":1,"b":1}}}`, nil)
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("talk's session at %s: HTTP %d, want 404", path, res.StatusCode)
		}
	}
	// Each toolset's catalog page shows its own tools.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, g.URL+"/talk", nil)
	req.Header.Set("Accept", "text/html")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(page), "every_echo") ||
		strings.Contains(string(page), "every_get-sum") || !strings.Contains(string(page), "1 tool") {
		t.Errorf("talk's catalog page (%s): %.400s", res.Header.Get("Content-Type"), page)
	}

	if again := mcpChild(t); again != child {
		t.Errorf("the child changed from %d to %d while the toolsets were used", child, again)
	}
}

// TestToolsetGates: every gate of the endpoint stands at a toolset's path
// (one gate, every path): a foreign Origin is refused 403, a request
// without the key 401, a body over max_body_size 413; a toolset's own
// auth policy refuses a key the endpoint takes, and its own rate_limit
// counts apart from the endpoint's.
func TestToolsetGates(t *testing.T) {
	t.Setenv("EDGEMCP_GATE_TEST_KEY", gateTestKey)
	t.Setenv("EDGEMCP_TOOLSET_OTHER_KEY", "toolset-other-key-0123456789abcdef")
	seed := "../examples/data/demo.sql"
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		allowed_origins https://app.example.com
		max_body_size 2KiB
		connector lite sqlite %q {
			read_only
			seed %q
		}
		auth keys api_key {
			key {env.EDGEMCP_GATE_TEST_KEY} {
				subject gate
			}
			key {env.EDGEMCP_TOOLSET_OTHER_KEY} {
				subject other
			}
		}
		default_auth keys
		tool gate-customers {
			description "Counts customers"
			use lite
			statement "SELECT count(*) AS n FROM customers"
		}
		toolset counts {
			tools gate-*
		}
		toolset gated {
			tools gate-*
			auth keys {
				subject other
			}
			rate_limit 3 per 1m
		}
	}
}`, t.TempDir()+"/gate.db", seed))
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(path, origin string, header map[string]string, body string) int {
		h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
		for k, v := range header {
			h[k] = v
		}
		status, _ := gateRequest(t, g, http.MethodPost, path, fmt.Sprintf("127.0.0.1:%d", g.port), origin, h, body)
		return status
	}
	noKey := map[string]string{"X-API-Key": ""}
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 4096) + `"}}`
	for _, path := range []string{"/mcp", "/mcp/counts"} {
		if s := post(path, "", nil, init); s != http.StatusOK {
			t.Fatalf("%s: initialize with the key: HTTP %d", path, s)
		}
		if s := post(path, "https://evil.example", nil, init); s != http.StatusForbidden {
			t.Errorf("%s: a foreign Origin: HTTP %d, want 403", path, s)
		}
		if s := post(path, "", noKey, init); s != http.StatusUnauthorized {
			t.Errorf("%s: no key: HTTP %d, want 401", path, s)
		}
		if s := post(path, "", nil, big); s != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: a body over max_body_size: HTTP %d, want 413", path, s)
		}
	}

	// The 401 at a toolset's path points at the toolset's own metadata
	// document, whose resource is the toolset's URL.
	own := fmt.Sprintf("127.0.0.1:%d", g.port)
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "X-API-Key": ""}
	_, hdr, _ := gateExchange(t, g, http.MethodPost, "/mcp/counts", own, "", h, init)
	metaURL := "http://" + own + "/.well-known/oauth-protected-resource/mcp/counts"
	if got := hdr.Get("WWW-Authenticate"); !strings.Contains(got, `resource_metadata="`+metaURL+`"`) {
		t.Errorf("/mcp/counts 401: WWW-Authenticate %q, want resource_metadata %s", got, metaURL)
	}
	if status, doc := gateRequest(t, g, http.MethodGet, "/.well-known/oauth-protected-resource/mcp/counts", own, "", nil, ""); status != http.StatusOK ||
		!strings.Contains(doc, `"resource":"http://`+own+`/mcp/counts"`) {
		t.Errorf("the toolset's metadata document: %d %s", status, doc)
	}

	// gated: its own policy (subject other) in place of the endpoint's.
	if s := post("/mcp/gated", "", nil, init); s != http.StatusForbidden && s != http.StatusUnauthorized {
		t.Errorf("/mcp/gated: the endpoint's key (subject gate): HTTP %d, want a refusal", s)
	}
	other := map[string]string{"X-API-Key": "toolset-other-key-0123456789abcdef"}
	before := testutil.ToFloat64(telemetry.ToolsetRequests.WithLabelValues("gated"))
	for i := 0; i < 3; i++ {
		if s := post("/mcp/gated", "", other, init); s != http.StatusOK {
			t.Fatalf("/mcp/gated with its subject, request %d: HTTP %d", i+1, s)
		}
	}
	if s := post("/mcp/gated", "", other, init); s != http.StatusTooManyRequests {
		t.Errorf("/mcp/gated, a 4th request within its rate_limit 3 per 1m: HTTP %d, want 429", s)
	}
	if s := post("/mcp", "", other, init); s != http.StatusOK {
		t.Errorf("/mcp for the same caller, on the endpoint's own counters: HTTP %d", s)
	}
	if got := testutil.ToFloat64(telemetry.ToolsetRequests.WithLabelValues("gated")) - before; got != 3 {
		t.Errorf("edgemcp_toolset_requests_total{toolset=gated} grew by %v, want 3 (the requests past its gates)", got)
	}
	// Another path under the endpoint's is not the handler's: the site,
	// which has nothing else, answers it empty.
	h = map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	if _, body := gateRequest(t, g, http.MethodPost, "/mcp/nothing", own, "", h, init); body != "" {
		t.Errorf("/mcp/nothing reached the endpoint: %.200s", body)
	}
	if _, body := gateRequest(t, g, http.MethodPost, "/mcp/counts", own, "", h, init); !strings.Contains(body, `"serverInfo"`) {
		t.Errorf("/mcp/counts did not answer initialize: %.200s", body)
	}
}

// TestToolsetFollowsUpstreamChanges: when an upstream changes its tools
// (list_changed), each toolset's listing follows the endpoint's: a new
// tool its pattern selects appears there, one it does not stays out.
func TestToolsetFollowsUpstreamChanges(t *testing.T) {
	up := startGovernedUpstream(t,
		mcp.NewTool("read_a", mcp.WithDescription("Reads a.")),
		mcp.NewTool("write_a", mcp.WithDescription("Writes a.")),
	)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source up mcp %s
		toolset reads {
			tools up_read_*
		}
	}
}`, up.URL))
	reads := toolsetClient(t, g, "reads")
	if got := listNames(t, reads); !slices.Equal(got, []string{"up_read_a"}) {
		t.Fatalf("reads lists %v, want [up_read_a]", got)
	}
	up.add(mcp.NewTool("read_b", mcp.WithDescription("Reads b.")))
	up.add(mcp.NewTool("write_b", mcp.WithDescription("Writes b.")))
	waitFor(t, "reads lists the new read tool", func() bool { return slices.Contains(listNames(t, reads), "up_read_b") })
	if got := listNames(t, g.mcpClient(t)); len(got) != 4 {
		t.Errorf("the endpoint lists %v, want its 4 tools", got)
	}
	if got := listNames(t, reads); !slices.Equal(got, []string{"up_read_a", "up_read_b"}) {
		t.Errorf("reads lists %v after the change, want [up_read_a up_read_b]", got)
	}
}

// TestToolsetSearchStaysInside: under `discovery search` a toolset's
// meta-tools search, describe and call its own tools only: a tool of the
// endpoint outside the toolset is not found, not described and not run
// through call_tool, even by a caller the endpoint lets run it.
func TestToolsetSearchStaysInside(t *testing.T) {
	resetCatalog(t)
	g := startGateway(t, discoveryCaddyfile(t, `discovery search
		toolset shop {
			sources shop
			tools shop_item1*
		}`))
	at := *g
	at.URL = g.URL + "/shop"
	ctx := context.Background()
	alice := at.mcpClient(t, transport.WithHTTPHeaders(map[string]string{"X-API-Key": discoveryAliceKey}))
	call := func(name string, args map[string]any) (string, error) {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		res, err := alice.CallTool(ctx, req)
		if err != nil {
			return "", err
		}
		if res.IsError || len(res.Content) != 1 {
			return "", fmt.Errorf("result %+v", res)
		}
		return res.Content[0].(mcp.TextContent).Text, nil
	}
	list, err := alice.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil || !slices.Equal(listedNames(list.Tools), []string{"call_tool", "describe_tool", "search_tools"}) {
		t.Fatalf("the toolset's tools/list in search mode: %v %v", list, err)
	}
	text, err := call("search_tools", map[string]any{"query": "restart the payment queue shelf 117 visitors"})
	if err != nil {
		t.Fatal(err)
	}
	var f foundTools
	if err := json.Unmarshal([]byte(text), &f); err != nil {
		t.Fatal(err)
	}
	for _, name := range f.names() {
		if !strings.HasPrefix(name, "shop_item1") {
			t.Errorf("search_tools at the toolset found %s, outside it", name)
		}
	}
	if !slices.Contains(f.names(), "shop_item117") {
		t.Errorf("search_tools at the toolset: %v, want shop_item117 among them", f.names())
	}
	if _, err := call("describe_tool", map[string]any{"name": "ops_restart"}); err == nil || !strings.Contains(err.Error(), `tool "ops_restart" not found`) {
		t.Errorf("describe_tool ops_restart at the toolset: %v", err)
	}
	if text, err := call("call_tool", map[string]any{"name": "ops_restart"}); err == nil || strings.Contains(text, "restarted") {
		t.Errorf("call_tool ops_restart at the toolset: %s %v", text, err)
	}
	if text, err := call("call_tool", map[string]any{"name": "shop_item117", "arguments": map[string]any{"quantity": 3}}); err != nil || !strings.Contains(text, "item117") {
		t.Errorf("call_tool shop_item117 at the toolset: %s %v", text, err)
	}
	// At the endpoint alice runs ops_restart: the refusal is the toolset's.
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "call_tool", map[string]any{"name": "ops_restart"}
	res, err := g.mcpClient(t, transport.WithHTTPHeaders(map[string]string{"X-API-Key": discoveryAliceKey})).CallTool(ctx, req)
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(mcp.TextContent).Text, "restarted") {
		t.Errorf("call_tool ops_restart at the endpoint: %+v %v", res, err)
	}
}
