package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// SEP-2549's caching hints on the wire (docs/tasks.md, Caching hints),
// read by mcp-go's client, which speaks 2026-07-28.

// cacheHintsCaddyfile: a cached resource, a resource without a cache
// line, one cached for everyone, and a tool; with default_auth when keyed.
func cacheHintsCaddyfile(t *testing.T, keyed bool) string {
	dir := t.TempDir()
	writeFile(t, dir+"/note.js", "let n = 0\nexport default function () { n++; return 'note ' + n }")
	auth := ""
	if keyed {
		auth = hintsAuth(t)
	}
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		%s
		tool one {
			description "one"
			handler %s/note.js
		}
		resource notes://cached {
			mime_type text/plain
			handler %s/note.js
			cache 60s
		}
		resource notes://shared {
			mime_type text/plain
			handler %s/note.js
			cache shared 60s
		}
		resource notes://live {
			mime_type text/plain
			handler %s/note.js
		}
	}
}`, auth, dir, dir, dir, dir)
}

// hintsAuth is an API key provider as default_auth, its key
// "hints-key-5c1e9a7b3d" for alice.
func hintsAuth(t *testing.T) string {
	t.Setenv("EDGEMCP_HINTS_KEY", "hints-key-5c1e9a7b3d")
	return `auth keys api_key {
			key {env.EDGEMCP_HINTS_KEY} {
				subject alice
			}
		}
		default_auth keys`
}

// hints are a result's ttlMs (-1: none) and cacheScope.
func hints(r mcp.CacheableResult) string {
	ttl, ok := r.TTL()
	if !ok {
		ttl = -1
	}
	return fmt.Sprintf("%d %s", ttl, r.CacheScope)
}

// TestCacheHintsOnTheWire: on 2026-07-28 a read of a cached resource says
// the time its entry has left and, when the cache key holds the caller,
// private; a `cache shared` one public; one without a cache line 0. The
// lists say 0, public where no caller is verified, else private. On
// 2025-11-25 nothing says them.
func TestCacheHintsOnTheWire(t *testing.T) {
	for _, keyed := range []bool{false, true} {
		t.Run(fmt.Sprintf("keyed=%v", keyed), func(t *testing.T) { cacheHintsOnTheWire(t, keyed) })
	}
}

func cacheHintsOnTheWire(t *testing.T, keyed bool) {
	{
		g := startGateway(t, cacheHintsCaddyfile(t, keyed))
		var opts []transport.StreamableHTTPCOption
		scope := "public"
		if keyed {
			opts = append(opts, transport.WithHTTPHeaders(map[string]string{"X-API-Key": "hints-key-5c1e9a7b3d"}))
			scope = "private"
		}
		c := g.mcpClient(t, opts...)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		read := func(uri string) *mcp.ReadResourceResult {
			t.Helper()
			res, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
			if err != nil {
				t.Fatalf("keyed=%v read %s: %v", keyed, uri, err)
			}
			return res
		}
		first := read("notes://cached")
		ttl, _ := first.TTL()
		if ttl <= 55000 || ttl > 60000 || first.CacheScope != mcp.CacheScope(scope) {
			t.Errorf("keyed=%v cached, first read: %s, want about 60000 %s", keyed, hints(first.CacheableResult), scope)
		}
		time.Sleep(1100 * time.Millisecond)
		second := read("notes://cached")
		if left, _ := second.TTL(); left >= ttl || left < ttl-5000 || second.Contents[0].(mcp.TextResourceContents).Text != first.Contents[0].(mcp.TextResourceContents).Text {
			t.Errorf("keyed=%v cached, second read: %s %+v, want the same entry with less time left than %d", keyed, hints(second.CacheableResult), second.Contents, ttl)
		}
		if shared := read("notes://shared"); !strings.HasSuffix(hints(shared.CacheableResult), " public") {
			t.Errorf("keyed=%v shared: %s, want public", keyed, hints(shared.CacheableResult))
		}
		if live := read("notes://live"); hints(live.CacheableResult) != "0 "+scope {
			t.Errorf("keyed=%v not cached: %s, want 0 %s", keyed, hints(live.CacheableResult), scope)
		}

		tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil || hints(tools.CacheableResult) != "0 "+scope {
			t.Errorf("keyed=%v tools/list: %+v %v", keyed, tools, err)
		}
		resources, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
		if err != nil || hints(resources.CacheableResult) != "0 "+scope {
			t.Errorf("keyed=%v resources/list: %+v %v", keyed, resources, err)
		}
		discover := rawRequest(t, g, keyed, "server/discover", `{}`)
		if got := discover["ttlMs"]; got != float64(0) || discover["cacheScope"] != scope {
			t.Errorf("keyed=%v server/discover: ttlMs %v cacheScope %v", keyed, got, discover["cacheScope"])
		}

		// 2025-11-25 has no hints.
		header := map[string]string{}
		if keyed {
			header["X-API-Key"] = "hints-key-5c1e9a7b3d"
		}
		s := authSession(t, g, "2025-11-25", header)
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"notes://cached"}}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		} {
			r, _ := s.postWith(t, body, header)
			if r.Error != nil || strings.Contains(string(r.Result), "ttlMs") || strings.Contains(string(r.Result), "cacheScope") {
				t.Errorf("keyed=%v 2025-11-25 %s: %s %+v", keyed, body, r.Result, r.Error)
			}
		}
	}
}

// rawRequest is the result of a 2026-07-28 request of method with params.
func rawRequest(t *testing.T, g *gateway, keyed bool, method, params string) map[string]any {
	t.Helper()
	s := &rawSession{url: g.URL, version: "2026-07-28"}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`
	params = strings.TrimSuffix(strings.TrimSpace(params), "}")
	if params != "{" {
		params += ","
	}
	header := map[string]string{"Mcp-Method": method}
	if keyed {
		header["X-API-Key"] = "hints-key-5c1e9a7b3d"
	}
	r, _ := s.postWith(t, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+meta+`}}`, header)
	var out map[string]any
	if r.Error != nil || json.Unmarshal(r.Result, &out) != nil {
		t.Fatalf("%s: %d %+v %s", method, r.Status, r.Error, r.Result)
	}
	return out
}

// hintingUpstream is an mcp-go server whose resources/read results carry
// the hints its resources' names give (ttlMs and scope), on every
// protocol version: the gateway's sessions speak 2025-11-25.
func hintingUpstream(t *testing.T) string {
	hooks := &server.Hooks{}
	given := map[string]struct {
		ttl   int64
		scope mcp.CacheScope
	}{"up://public": {30000, mcp.CacheScopePublic}, "up://private": {5000, mcp.CacheScopePrivate}}
	hooks.AddAfterReadResource(func(_ context.Context, _ any, req *mcp.ReadResourceRequest, res *mcp.ReadResourceResult) {
		if h, ok := given[req.Params.URI]; ok {
			res.SetCacheHints(h.ttl, h.scope)
		}
	})
	up := server.NewMCPServer("hinting", "1", server.WithResourceCapabilities(false, false), server.WithHooks(hooks))
	for _, uri := range []string{"up://public", "up://private", "up://none"} {
		up.AddResource(mcp.NewResource(uri, uri, mcp.WithMIMEType("text/plain")), func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "from upstream"}}, nil
		})
	}
	return servePlainTool(t, up)
}

// TestCacheHintsFromUpstream: an MCP source's hints on resources/read
// reach a 2026-07-28 client within the gateway's: its ttlMs, its scope,
// and private for a read made for a verified caller (default_auth); none
// is 0 private, the protocol's default. A 2025-11-25 client gets the
// server's text as it sent it.
func TestCacheHintsFromUpstream(t *testing.T) {
	url := hintingUpstream(t)
	for _, keyed := range []bool{false, true} {
		t.Run(fmt.Sprintf("keyed=%v", keyed), func(t *testing.T) { cacheHintsFromUpstream(t, url, keyed) })
	}
}

func cacheHintsFromUpstream(t *testing.T, url string, keyed bool) {
	{
		auth := ""
		var opts []transport.StreamableHTTPCOption
		if keyed {
			auth = hintsAuth(t)
			opts = append(opts, transport.WithHTTPHeaders(map[string]string{"X-API-Key": "hints-key-5c1e9a7b3d"}))
		}
		g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		%s
		source up mcp %s/mcp {
			required
			session shared
		}
	}
}`, auth, url))
		c := g.mcpClient(t, opts...)
		want := map[string]string{"up://public": "30000 public", "up://private": "5000 private", "up://none": "0 private"}
		if keyed {
			want["up://public"] = "30000 private"
		}
		for uri, w := range want {
			res, err := c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
			if err != nil || hints(res.CacheableResult) != w {
				t.Errorf("keyed=%v %s: %v %v, want %s", keyed, uri, res, err, w)
			}
		}
		if keyed {
			return
		}
		legacy := legacyClient(t, g.URL, nil)
		res, err := legacy.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "up://private"}})
		if err != nil || hints(res.CacheableResult) != "5000 private" {
			t.Errorf("2025-11-25: %v %v, want the server's text", res, err)
		}
	}
}

// TestCacheHintsTypeScriptClient: the TypeScript SDK client 2.x, which
// speaks 2026-07-28 and honours the hints, reads the same hints and keeps
// a cached resource's contents for its ttlMs (its second read is served
// from its own cache), while it reads a resource without a cache line
// again (ttlMs 0: the handler ran twice).
func TestCacheHintsTypeScriptClient(t *testing.T) {
	dir := nodeDir(t)
	g := startGateway(t, cacheHintsCaddyfile(t, false))
	cmd := exec.Command(node22(t, dir), filepath.Join(dir, "cache-hints-client.mjs"), g.URL, "notes://cached", "notes://live")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var seen struct {
		Reads map[string]struct {
			TTLMs         float64 `json:"ttlMs"`
			CacheScope    string  `json:"cacheScope"`
			First, Second string
		} `json:"reads"`
		Tools struct {
			TTLMs      *float64 `json:"ttlMs"`
			CacheScope string   `json:"cacheScope"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(out, &seen); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	cached, live := seen.Reads["notes://cached"], seen.Reads["notes://live"]
	if cached.TTLMs <= 55000 || cached.CacheScope != "public" || cached.First != cached.Second {
		t.Errorf("cached resource: %+v", cached)
	}
	if live.TTLMs != 0 || live.CacheScope != "public" || live.First == live.Second {
		t.Errorf("resource without a cache line: %+v, want read twice", live)
	}
	if seen.Tools.TTLMs == nil || *seen.Tools.TTLMs != 0 || seen.Tools.CacheScope != "public" {
		t.Errorf("tools/list: %s", out)
	}
}
