package caddymodule

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// BenchmarkServeProxiedCall prints what one small tools/call of an MCP
// source costs through ServeHTTP, in process, to an mcp-go upstream over
// loopback HTTP (whose own work is in the figures too): on the direct
// path (a session on 2025-11-25) and relayed to mcp-go (a progress token
// in _meta sends it there). Without the call's log line.
//
//	go test ./caddymodule -run '^$' -bench ServeProxiedCall -benchmem
func BenchmarkServeProxiedCall(b *testing.B) {
	post := benchHandler(b, fmt.Sprintf(`mcp {
		source up mcp %s {
			transport streamable
			required
		}
	}`, testservices.StartEchoUpstream(b)))
	session := benchSession(b, post)
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"up_echo","arguments":{"message":"m1"}%s}}`
	for _, c := range []struct{ name, meta string }{
		{"direct", ""},
		{"mcp-go", `,"_meta":{"progressToken":1}`},
	} {
		body := fmt.Sprintf(call, c.meta)
		b.Run(c.name, func(b *testing.B) {
			if w := post(body, session); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"echo: m1"`) {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
			b.ReportAllocs()
			for b.Loop() {
				post(body, session)
			}
		})
	}
}
