package caddymodule

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	post := benchHandler(b, fmt.Sprintf(`mcp {
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
	inSession := benchSession(b, post)
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
