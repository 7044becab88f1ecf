package jsonrpc

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
)

// TestCanonicalNativeIsMCPGoEncoding: a Native result canonicalized once
// and written with its _meta (EncodeCanonical) is byte for byte what
// decoding it into mcp-go's types and encoding that (EncodeResult, the
// mcp-go path) gives, for every kind of content a source returns; a
// result with a _meta of its own is not canonicalized.
func TestCanonicalNativeIsMCPGoEncoding(t *testing.T) {
	natives := []string{
		`{"content":[{"type":"text","text":"{\"id\": 7, \"name\": \"a<b>&\u00e9\"}"}],"structuredContent":{"name":"a<b>&é","id":7,"n":9007199254740993}}`,
		`{"structuredContent":{"b":1,"a":[1.50,2e3]},"content":[{"text":"x","type":"text"}]}`,
		`{"content":[{"type":"text","text":"plain\ttext \u2028"}]}`,
		`{"content":[{"type":"image","mimeType":"image/png","data":"iVBORw0KGgo="}]}`,
		`{"content":[{"type":"audio","mimeType":"audio/wav","data":"UklGRg=="}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"http://x.test/f?a","mimeType":"application/pdf","blob":"JVBERi0="}}]}`,
		`{"content":[{"type":"text","text":"failed"}],"isError":true}`,
		`{"content":[]}`,
		`{}`,
	}
	metas := []map[string]any{nil, {"edgemcp/cache": map[string]any{"status": "stale", "age_seconds": int64(12)}}}
	for _, n := range natives {
		c, ok := CanonicalNative(json.RawMessage(n))
		if !ok {
			t.Fatalf("%s: not canonicalized", n)
		}
		for _, meta := range metas {
			got, perr := EncodeCanonical(&pipeline.Result{Native: c, Canonical: true, Meta: meta}, "", nil)
			if perr != nil {
				t.Fatalf("%s: %v", n, perr)
			}
			res, perr := EncodeResult(&pipeline.Result{Native: json.RawMessage(n), Meta: meta}, "2025-11-25")
			if perr != nil {
				t.Fatal(perr)
			}
			want, _ := json.Marshal(res)
			if !bytes.Equal(got, want) {
				t.Errorf("meta %v:\n canonical %s\n mcp-go    %s", meta, got, want)
			}
		}
	}
	if _, ok := CanonicalNative(json.RawMessage(`{"_meta":{"a":1},"content":[]}`)); ok {
		t.Error("a result with its own _meta was canonicalized")
	}
}
