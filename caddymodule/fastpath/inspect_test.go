package fastpath

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
)

// FuzzInspectCall reads arbitrary request bodies as the endpoint does
// before anything else: it never panics, and a tools/call it recognizes
// carries the name the body gave, as JSON decodes it.
func FuzzInspectCall(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"nope"}}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/call"}`, `{"method":"tools/call","id":1,"params":{"arguments":[1]}}`,
		`[{"jsonrpc":"2.0"}]`, `{"id":1e999,"method":"tools/call"}`, ``, `{`,
		// Invalid UTF-8 in the name: JSON decoding makes it U+FFFD.
		"{\"jrpc\":\"2.0\",\"id\":\"x\",\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\x7fpe\"}}",
	} {
		f.Add(s)
	}
	s := newTestServer(f, &pipeline.Tool{Name: "echo", Executor: pipeline.ExecutorFunc(nil)})
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		st := s.Inspect([]byte(body), r)
		if st == nil {
			return
		}
		// The name is the body's, as JSON decodes it (invalid UTF-8
		// becomes U+FFFD), never anything else.
		var msg struct {
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(body), &msg); err != nil || st.Name != msg.Params.Name {
			t.Fatalf("call state names %q, the body %q (%v)", st.Name, msg.Params.Name, err)
		}
		// The arguments and the choice of path are what reading the body
		// in two passes (the message, then its arguments) gives.
		args, argsOK := referenceArguments(t, body)
		if !reflect.DeepEqual(st.Args, args) {
			t.Fatalf("arguments %#v, want %#v", st.Args, args)
		}
		if st.direct && !argsOK {
			t.Fatalf("direct with arguments that are not an object")
		}
	})
}

// referenceArguments reads a tools/call body's arguments as a plain
// two-pass decode does: the message with its arguments raw, then those
// (numbers as json.Number); ok when they are an object, null or absent.
func referenceArguments(t *testing.T, body string) (map[string]any, bool) {
	var msg struct {
		Params struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil {
		t.Fatalf("Inspect read a body json.Unmarshal refuses: %v", err)
	}
	raw := msg.Params.Arguments
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var args map[string]any
	if dec.Decode(&args) != nil || args == nil {
		return nil, false
	}
	return args, true
}
