package caddymodule

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
)

// BenchmarkServeProxiedCall prints what one small tools/call of an MCP
// source costs through ServeHTTP, in process, to an mcp-go upstream over
// loopback HTTP (whose own work is in the figures too): on the direct
// path (a session on 2025-11-25) and relayed to mcp-go (a progress token
// in _meta sends it there). Without the call's log line.
//
//	go test ./caddymodule -run '^$' -bench ServeProxiedCall -benchmem
func BenchmarkServeProxiedCall(b *testing.B) {
	up := server.NewMCPServer("echo", "1", server.WithToolCapabilities(true))
	up.AddTool(mcp.NewTool("echo", mcp.WithString("message")), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("echo: " + req.GetString("message", "")), nil
	})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(up))
	b.Cleanup(srv.Close)
	h := new(Handler)
	d := caddyfile.NewTestDispenser(fmt.Sprintf(`mcp {
		source up mcp %s/mcp {
			transport streamable
			required
		}
	}`, srv.URL))
	if err := h.UnmarshalCaddyfile(d); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	if err := h.Provision(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = h.Cleanup() }()
	h.calls = telemetry.NewRecorder(zap.NewNop()) // no log line: the figures are the path's
	post := func(body string, header map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		_ = h.ServeHTTP(w, r, nil)
		return w
	}
	init := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`, nil)
	session := init.Header().Get("Mcp-Session-Id")
	if session == "" {
		b.Fatalf("no session: %d %s", init.Code, init.Body)
	}
	inSession := map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, inSession)
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"up_echo","arguments":{"message":"m1"}%s}}`
	for _, c := range []struct{ name, meta string }{
		{"direct", ""},
		{"mcp-go", `,"_meta":{"progressToken":1}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			if w := post(fmt.Sprintf(call, c.meta), inSession); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"echo: m1"`) {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
			b.ReportAllocs()
			for b.Loop() {
				post(fmt.Sprintf(call, c.meta), inSession)
			}
		})
	}
}
