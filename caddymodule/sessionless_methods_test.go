package caddymodule

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestSessionlessUnsupportedMethod: on 2026-07-28 a method the endpoint does
// not serve (prompts/list with no prompt) is answered as the protocol and
// mcp-go's own server answer it: HTTP 404 with the JSON-RPC error -32601
// (docs/caddyfile.md, Errors). That protocol has no session, so nothing ends: mcp-go's
// client reports the 404 as "session terminated" but its next request
// works. An unknown tool keeps -32601 with HTTP 400.
func TestSessionlessUnsupportedMethod(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir+"/one.js", "export default function () { return 1 }")
	g := startGateway(t, `SITE {
	mcp /mcp {
		tool one {
			description "one"
			handler `+dir+`/one.js
		}
	}
}`)
	s := &rawSession{url: g.URL, version: "2026-07-28"}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`
	r, _ := s.postWith(t, `{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{`+meta+`}}`, map[string]string{"Mcp-Method": "prompts/list"})
	if r.Status != http.StatusNotFound || r.Error == nil || r.Error.Code != mcp.METHOD_NOT_FOUND {
		t.Errorf("prompts/list on 2026-07-28: status %d, error %+v; want 404 with -32601", r.Status, r.Error)
	}
	if r := sessionlessCall(t, s, 2, "nope", `{}`, ""); r.Status != http.StatusBadRequest || r.Error == nil || r.Error.Code != mcp.METHOD_NOT_FOUND {
		t.Errorf("unknown tool on 2026-07-28: status %d, error %+v; want 400 with -32601", r.Status, r.Error)
	}

	c := g.mcpClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("mcp-go's client, prompts/list: %v", err)
	}
	if res, err := c.ListTools(ctx, mcp.ListToolsRequest{}); err != nil || len(res.Tools) != 1 {
		t.Errorf("mcp-go's client after the 404: %+v %v", res, err)
	}
}
