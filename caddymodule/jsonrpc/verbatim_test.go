package jsonrpc

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/pipeline"
)

// TestEncodeVerbatim: a server's own result is written as it sent it
// (key order, fields mcp-go does not model), with the gateway's _meta
// merged in (its entries win), content when it had none, and on
// 2026-07-28 resultType and the gateway's identity unless the server
// wrote its own; what cannot be written so is left to be decoded (nil).
func TestEncodeVerbatim(t *testing.T) {
	server := &mcp.Implementation{Name: "gw", Version: "1"}
	stale := map[string]any{"edgemcp/cache": map[string]any{"status": "stale"}, "a<b": 1}
	const info = `"io.modelcontextprotocol/serverInfo":{"name":"gw","version":"1"}`
	for _, tc := range []struct {
		native, version string
		meta            map[string]any
		want            string
	}{
		{`{"zeta":{"b":1,"a":2},"content":[{"text":"hi","type":"text"}],"isError":false}`, "2025-11-25", nil,
			`{"zeta":{"b":1,"a":2},"content":[{"text":"hi","type":"text"}],"isError":false}`},
		{`{"structuredContent":{"n":1.50}}`, "2025-06-18", nil, `{"structuredContent":{"n":1.50},"content":[]}`},
		{`{"content":[]}`, "2025-11-25", stale, `{"content":[],"_meta":{"a\u003cb":1,"edgemcp/cache":{"status":"stale"}}}`},
		{`{"_meta":{"up":true,"a<b":0},"content":[]}`, "2025-03-26", stale,
			`{"_meta":{"up":true,"a<b":1,"edgemcp/cache":{"status":"stale"}},"content":[]}`},
		{`{"content":[],"x":1}`, "2026-07-28", nil, `{"content":[],"x":1,"resultType":"complete","_meta":{` + info + `}}`},
		{`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}},"resultType":"complete","content":[]}`, "2026-07-28", nil,
			`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}},"resultType":"complete","content":[]}`},
		{`{"_meta":{},"content":[]}`, "2026-07-28", map[string]any{"k": "v"}, `{"_meta":{"k":"v",` + info + `},"content":[],"resultType":"complete"}`},
		{`{"_meta":null,"content":[]}`, "2025-11-25", stale, ``},
		{`{"_meta":null,"content":[]}`, "2026-07-28", nil, ``},
		{`[]`, "2025-11-25", nil, ``},
	} {
		got := EncodeVerbatim(&pipeline.Result{Native: json.RawMessage(tc.native), Verbatim: true, Meta: tc.meta}, tc.version, server)
		if string(got) != tc.want {
			t.Errorf("%s on %s with %v:\n got  %s\n want %s", tc.native, tc.version, tc.meta, got, tc.want)
		}
	}
}
