package caddymodule

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"

	"github.com/edgemcp/edgemcp/pipeline"
)

// FuzzCaddyfile adapts arbitrary text inside an mcp block: the parser
// never panics, and a refusal names the Caddyfile and a line.
func FuzzCaddyfile(f *testing.F) {
	for _, s := range []string{
		"connector db postgres {env.DB} {\n\tread_only\n\tmax_conns 4\n}",
		"tool t {\n\tdescription \"x\"\n\tuse db\n\tstatement \"SELECT {{ inputs.a }}\"\n\tinput a int required\n}",
		"rate_limit 5 per 1m by ip", "cache {\n\tmax_size 1MiB\n}", "source s openapi x {\n\tcache 1s respect\n}",
		"auth k api_key {\n\tkey abc\n}", "source s mcp stdio x {\n\tapproval writes\n\tcwd {\n\t\tapproval\n\t}\n}",
		"approval_timeout 1s\nconnector db sqlite x {\n\tapproval required\n}", "tool t {\n\tinput a array<array<int>> default [[1]]\n}", "}", "{", "\"", "<<SQL\n",
		"discovery auto 5 {\n\tpin a b\n}", "source s mcp http://x {\n\tprefix off\n\tdisable a s.b\n\tinclude a* {\n}\n}",
	} {
		f.Add(s)
	}
	adapter := caddyconfig.GetAdapter("caddyfile")
	f.Fuzz(func(t *testing.T, body string) {
		src := ":8080 {\n\tmcp {\n" + body + "\n\t}\n}\n"
		_, _, err := adapter.Adapt([]byte(src), map[string]any{"filename": "Caddyfile"})
		// The mcp directive's own refusals name the file and line (Caddy's
		// tokenizer and site checks word theirs as they do).
		if err != nil && strings.Contains(err.Error(), "parsing caddyfile tokens for 'mcp'") && !strings.Contains(err.Error(), "Caddyfile:") {
			t.Fatalf("an error without its file and line: %v", err)
		}
	})
}

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
	h, _ := unitHandler(f, &pipeline.Tool{Name: "echo", Executor: pipeline.ExecutorFunc(nil)})
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		st := h.inspectCall([]byte(body), r)
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
		if err := json.Unmarshal([]byte(body), &msg); err != nil || st.name != msg.Params.Name {
			t.Fatalf("call state names %q, the body %q (%v)", st.name, msg.Params.Name, err)
		}
		// The arguments and the choice of path are what reading the body
		// in two passes (the message, then its arguments) gives.
		args, argsOK := referenceArguments(t, body)
		if !reflect.DeepEqual(st.args, args) {
			t.Fatalf("arguments %#v, want %#v", st.args, args)
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
		t.Fatalf("inspectCall read a body json.Unmarshal refuses: %v", err)
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
