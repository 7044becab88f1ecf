package caddymodule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// directCount is how many calls the direct path has answered so far.
func directCount() int64 { return int64(testutil.ToFloat64(directCallsTotal)) }

func directListCount() int64 { return int64(testutil.ToFloat64(directListsTotal)) }

// TestDirectPathMatchesMCPGo sends each call twice: as a plain request,
// which the direct path answers, and with an empty _meta, which sends it
// through mcp-go's dispatcher. Both answers must be the same JSON.
func TestDirectPathMatchesMCPGo(t *testing.T) {
	e2eSchema(t)
	for _, mode := range []string{"", "error_mode result"} {
		t.Run("mode="+mode, func(t *testing.T) {
			g := startGateway(t, e2eCaddyfile(t, mode))
			for _, version := range []string{"2025-03-26", "2025-11-25"} {
				s := g.rawSession(t, version)
				for i, call := range []struct{ tool, args string }{
					{"get-user", `{"user_id":1}`},
					{"get-user", `{"user_id":9007199254740993}`},
					{"list-users", `{"sort":"name"}`},
					{"list-users", `null`},
					{"customer", `{"id":2}`},
					{"get-user", `{"user_id":42.5}`},
					{"get-user", `{"user_id":1,"x":2}`},
					{"broken", `{}`},
					{"sneaky-write", `{}`},
				} {
					before := directCount()
					plain, _ := s.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i, call.tool, call.args))
					if directCount() != before+1 {
						t.Fatalf("%s %s: the plain request did not take the direct path", call.tool, call.args)
					}
					viaMCPGo, _ := s.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{}}}`, i, call.tool, call.args))
					if directCount() != before+1 {
						t.Fatalf("%s: the _meta request took the direct path", call.tool)
					}
					a, b := canonical(t, plain), canonical(t, viaMCPGo)
					if a != b {
						t.Errorf("%s %s %s:\n direct %s\n mcp-go %s", version, call.tool, call.args, a, b)
					}
				}
			}
		})
	}
}

func canonical(t *testing.T, r rpcResponse) string {
	t.Helper()
	out := map[string]any{"status": r.Status, "id": r.ID}
	if r.Error != nil {
		out["error"] = r.Error
	}
	if len(r.Result) > 0 {
		var v any
		dec := json.NewDecoder(bytes.NewReader(r.Result))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		out["result"] = v
	}
	b, _ := json.Marshal(out)
	// Each HTTP request has its own id (error_detail safe shows it).
	return requestIDs.ReplaceAllString(string(b), "request_id <id>")
}

var requestIDs = regexp.MustCompile(`request_id [0-9a-f-]{36}`)

// TestDirectPathDeclines: requests the direct path must leave to mcp-go.
func TestDirectPathDeclines(t *testing.T) {
	e2eSchema(t)
	g := startGateway(t, e2eCaddyfile(t, ""))
	s := g.rawSession(t, "2025-11-25")
	for _, tt := range []struct {
		name, body string
		header     map[string]string
	}{
		{"unknown tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, nil},
		{"no session", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-user","arguments":{"user_id":1}}}`, map[string]string{"Mcp-Session-Id": ""}},
		{"bad session", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-user","arguments":{"user_id":1}}}`, map[string]string{"Mcp-Session-Id": "forged"}},
		{"stateless protocol", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-user","arguments":{"user_id":1}}}`, map[string]string{"Mcp-Protocol-Version": "2026-07-28"}},
		{"event stream only", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-user","arguments":{"user_id":1}}}`, map[string]string{"Accept": "text/event-stream"}},
		{"arguments not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-user","arguments":[1]}}`, nil},
		{"progress token", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-user","arguments":{"user_id":1},"_meta":{"progressToken":"p"}}}`, nil},
	} {
		before := directCount()
		s.postWith(t, tt.body, tt.header)
		if directCount() != before {
			t.Errorf("%s: answered by the direct path", tt.name)
		}
	}
}
