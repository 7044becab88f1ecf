package jsonrpc

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/pipeline"
)

// TestEncodedValueIsMCPGoEncoding: a Value result encoded once
// (EncodeValue) and written from that encoding (EncodeCanonical) is byte
// for byte what encoding the value per answer gives (EncodeResult, the
// mcp-go path), for a client with structuredContent and one without, with
// a stale serve's _meta and without, whatever the value holds.
func TestEncodedValueIsMCPGoEncoding(t *testing.T) {
	values := []string{
		`[{"id":1,"name":"a\u003cb\u003e\u0026é\u2028","n":9007199254740993}]`,
		`[{"structuredContent":{"results":[1]},"text":"\"}}"}]`,
		`[]`,
		`null`,
		`"x"`,
		`{"rows":[1.5,2e3,-0]}`,
	}
	metas := []map[string]any{nil, {"edgemcp/cache": map[string]any{"status": "stale", "age_seconds": int64(12)}}}
	server := &mcp.Implementation{Name: "gw", Version: "1.2.3"}
	for _, v := range values {
		value, _ := json.Marshal(json.RawMessage(v)) // as the cache stores it
		enc, at, ok := EncodeValue(value)
		if !ok || !bytes.Equal(enc[at:at+len(value)], value) {
			t.Fatalf("%s: not encoded (%v) or value not at %d", v, ok, at)
		}
		for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
			for _, meta := range metas {
				got, perr := EncodeCanonical(&pipeline.Result{Value: json.RawMessage(value), Encoded: enc, Meta: meta}, version, server)
				if perr != nil || got == nil {
					t.Fatalf("%s %s: %s %v", v, version, got, perr)
				}
				res, perr := EncodeResult(&pipeline.Result{Value: json.RawMessage(value), Meta: meta}, version)
				if perr != nil {
					t.Fatal(perr)
				}
				if mcp.IsModernProtocol(version) {
					DecorateSessionless(res, server) // as the direct path and mcp-go do
				}
				want, _ := json.Marshal(res)
				if !bytes.Equal(got, want) {
					t.Errorf("%s meta %v:\n encoded %s\n mcp-go  %s", version, meta, got, want)
				}
			}
		}
	}
	// An encoding that is not of this shape is not used: the value is
	// encoded as usual.
	value := json.RawMessage(`[1]`)
	for _, bad := range []string{`{"w":[1]}`, `{"content":[],"structuredContent":{"results":[2]}}`, `}}`} {
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			if got, perr := EncodeCanonical(&pipeline.Result{Value: value, Encoded: json.RawMessage(bad)}, version, server); got != nil || perr != nil {
				t.Errorf("%s %s used: %s %v", version, bad, got, perr)
			}
		}
	}
}

// FuzzValueResult: a DB tool's rows written by the direct path
// (EncodedValueResult, then EncodeCanonical) are byte for byte what
// EncodeResult and mcp-go's marshalling make of them, for every protocol
// version, whatever the rows hold.
func FuzzValueResult(f *testing.F) {
	f.Add("name", "a\u003cb\u003e\u0026é\u2028", int64(9007199254740993))
	f.Add(`"}}`, "\x00\xff", int64(-1))
	f.Add("", `{"structuredContent":{"results":[1]}}`, int64(0))
	server := &mcp.Implementation{Name: "gw", Version: "1.2.3"}
	f.Fuzz(func(t *testing.T, column, text string, n int64) {
		rows := &pipeline.Rows{Columns: []string{"id", column, "n"}, Values: [][]any{{int64(1), text, n}, {nil, true, column}}}
		for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
			res := EncodedValueResult(&pipeline.Result{Value: rows})
			got, perr := EncodeCanonical(res, version, server)
			if perr != nil || got == nil {
				t.Fatalf("%s: %s %v", version, got, perr)
			}
			out, perr := EncodeResult(&pipeline.Result{Value: rows}, version)
			if perr != nil {
				t.Fatal(perr)
			}
			if mcp.IsModernProtocol(version) {
				DecorateSessionless(out, server)
			}
			want, _ := json.Marshal(out)
			if !bytes.Equal(got, want) {
				t.Errorf("%s:\n direct %s\n mcp-go %s", version, got, want)
			}
		}
	})
}

// BenchmarkValueResult: a DB tool's one-row answer encoded by the direct
// path (direct) and as mcp-go's marshalling makes it (mcp-go), in one run:
//
//	go test ./caddymodule -run '^$' -bench ValueResult -benchmem
func BenchmarkValueResult(b *testing.B) {
	rows := &pipeline.Rows{Columns: []string{"id", "name", "email", "created_at"},
		Values: [][]any{{int64(4711), "user 4711", "user4711@example.com", "2026-01-02T03:04:05.123456Z"}}}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			res := EncodedValueResult(&pipeline.Result{Value: rows})
			if out, perr := EncodeCanonical(res, "2025-06-18", nil); out == nil || perr != nil {
				b.Fatal(perr)
			}
		}
	})
	b.Run("mcp-go", func(b *testing.B) {
		for b.Loop() {
			out, _ := EncodeResult(&pipeline.Result{Value: rows}, "2025-06-18")
			if _, err := json.Marshal(out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
