package openapi

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// A JSON object answer is encoded once as mcp-go encodes a CallToolResult
// (decoding it into mcp-go's types and encoding that again changes
// nothing, so the gateway may write it as it is), with the object as
// written as both the text block and structuredContent.
func TestObjectResultIsCanonical(t *testing.T) {
	for _, obj := range []string{
		`{"id": 7, "name": "a<b>&é\u2028"}`,
		`{"raw": "\u2028 \" </script>"}`,
		`{"text": "edgemcp:text", "o": "edgemcp:object"}`,
		`{"b":1,"a":[1.50,2e3],"n":9007199254740993}`,
		"{\n  \"nested\": {\"z\": null, \"y\": [true, false, {}]}\n}\n",
		`{}`,
	} {
		res, err := objectResult(bytes.TrimSpace([]byte(obj)), nil)
		if err != nil {
			t.Fatalf("%s: %v", obj, err)
		}
		if !res.Canonical {
			t.Fatalf("%s: not marked Canonical", obj)
		}
		var out mcp.CallToolResult
		if err := json.Unmarshal(res.Native, &out); err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(&out)
		if !bytes.Equal(again, res.Native) {
			t.Errorf("not mcp-go's encoding:\n got   %s\n again %s", res.Native, again)
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, []byte(obj))
		if text := out.Content[0].(mcp.TextContent).Text; text != strings.TrimSpace(obj) {
			t.Errorf("text block %q, want %q", text, strings.TrimSpace(obj))
		}
		if !bytes.Equal(out.RawStructuredContent, compact.Bytes()) && !strings.Contains(obj, "<") {
			t.Errorf("structuredContent %s, want %s", out.RawStructuredContent, compact.Bytes())
		}
	}
	if _, err := objectResult([]byte(`{"a":1} {"b":2}`), nil); err == nil {
		t.Error("two objects accepted")
	}
}

// FuzzObjectResult: for any object an upstream may send, objectResult's
// bytes are mcp-go's encoding of the same CallToolResult.
func FuzzObjectResult(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"<&>"}`, "{\"\xff\":[1,2.0e1]}", `{"x":"\u2029\ud800"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, obj string) {
		o := bytes.TrimSpace([]byte(obj))
		if len(o) == 0 || o[0] != '{' || !json.Valid(o) {
			return
		}
		res, err := objectResult(o, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(o))}, RawStructuredContent: json.RawMessage(o)})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(res.Native, want) {
			t.Errorf("%q:\n got    %s\n mcp-go %s", obj, res.Native, want)
		}
	})
}
