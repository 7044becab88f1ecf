package caddymodule

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
)

// benchPost serves one POST of body, with header's headers, through a
// benchmark's handler.
type benchPost func(body string, header map[string]string) *httptest.ResponseRecorder

// benchHandler provisions the handler of block, an mcp Caddyfile block,
// for a benchmark that calls ServeHTTP in process (no network, no Caddy
// server around it), without the call's log line: the figures are the
// path's. It is cleaned up when the benchmark ends.
func benchHandler(b *testing.B, block string) benchPost {
	b.Helper()
	h := new(Handler)
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(block)); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	b.Cleanup(cancel)
	if err := h.Provision(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Cleanup() })
	h.calls = telemetry.NewRecorder(zap.NewNop())
	return func(body string, header map[string]string) *httptest.ResponseRecorder {
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
}

// benchSession opens an MCP session on 2025-11-25 and returns the headers
// of its requests.
func benchSession(b *testing.B, post benchPost) map[string]string {
	b.Helper()
	init := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`, nil)
	id := init.Header().Get("Mcp-Session-Id")
	if id == "" {
		b.Fatalf("no session: %d %s", init.Code, init.Body)
	}
	session := map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
	return session
}
