package caddymodule

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"go.uber.org/zap"
)

// BenchmarkServeCall prints what one tools/call costs through ServeHTTP,
// in process (no network, no Caddy server around it): a cache hit of a
// SQLite tool answered on the direct path, on a session (2025-11-25) and
// sessionless (2026-07-28), the same call relayed to mcp-go (a
// progress token in _meta sends it there), and a JavaScript handler (the
// limits bench's hello tool, bench/scripts.go) on the direct path.
// Without the call's log line.
//
//	go test ./caddymodule -run '^$' -bench ServeCall -benchmem
func BenchmarkServeCall(b *testing.B) {
	scripts := b.TempDir()
	if err := os.MkdirAll(filepath.Join(scripts, "hello"), 0o755); err != nil {
		b.Fatal(err)
	}
	hello := `export default ({inputs}) => ({greeting: 'Hello, ' + inputs.name + '!'})`
	if err := os.WriteFile(filepath.Join(scripts, "hello", "handler.js"), []byte(hello), 0o644); err != nil {
		b.Fatal(err)
	}
	h := new(Handler)
	d := caddyfile.NewTestDispenser(fmt.Sprintf(`mcp {
		scripts_dir %s
		connector lite sqlite %s
		cache
		tool one {
			description "one row"
			use lite
			statement "SELECT {{ inputs.x }} AS x"
			input x int required
			cache 1h
		}
		tool hello {
			description "Say hello"
			input name string default "world"
		}
	}`, scripts, filepath.Join(b.TempDir(), "bench.db")))
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
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"one","arguments":{"x":42}%s}}`
	const sessionless = `,"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	for _, c := range []struct {
		name, body string
		header     map[string]string
	}{
		{"direct-session", fmt.Sprintf(call, ""), inSession},
		{"direct-sessionless", fmt.Sprintf(call, sessionless),
			map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "one"}},
		{"mcp-go", fmt.Sprintf(call, `,"_meta":{"progressToken":1}`), inSession},
		{"js-session", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hello","arguments":{"name":"Ada"}}}`, inSession},
	} {
		b.Run(c.name, func(b *testing.B) {
			if w := post(c.body, c.header); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"result"`) {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
			b.ReportAllocs()
			for b.Loop() {
				post(c.body, c.header)
			}
		})
	}
}
