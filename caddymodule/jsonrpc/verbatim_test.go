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

// BenchmarkVerbatimResult: what writing a proxied result costs, as the
// server sent it (EncodeVerbatim) and decoded into mcp-go's types and
// encoded again (EncodeResult, then marshalled), for a one-line text
// result and one with structuredContent of 40 rows.
//
//	go test ./caddymodule/jsonrpc -run '^$' -bench VerbatimResult -benchmem
func BenchmarkVerbatimResult(b *testing.B) {
	var rows []map[string]any
	for i := range 40 {
		rows = append(rows, map[string]any{"id": i, "name": "row name", "ok": i%2 == 0})
	}
	structured, _ := json.Marshal(map[string]any{"rows": rows})
	text, _ := json.Marshal(string(structured))
	for _, c := range []struct{ name, native string }{
		{"text", `{"content":[{"type":"text","text":"echo: m1"}]}`},
		{"structured", `{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":` + string(structured) + `}`},
	} {
		res := &pipeline.Result{Native: json.RawMessage(c.native), Verbatim: true}
		b.Run(c.name+"/verbatim", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if EncodeVerbatim(res, "2025-11-25", nil) == nil {
					b.Fatal("not written")
				}
			}
		})
		b.Run(c.name+"/decoded", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				out, perr := EncodeResult(res, "2025-11-25")
				if perr != nil {
					b.Fatal(perr)
				}
				if _, err := json.Marshal(out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
