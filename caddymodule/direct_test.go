package caddymodule

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
)

// directCount is how many calls the direct path has answered so far.
func directCount() int64 { return int64(testutil.ToFloat64(telemetry.DirectCalls)) }

func directListCount() int64 { return int64(testutil.ToFloat64(telemetry.DirectLists)) }

// TestDirectPathMatchesMCPGo sends each call twice: as a plain request,
// which the direct path answers, and with an empty _meta, which sends it
// through mcp-go's dispatcher. Both answers must be the same JSON.
func TestDirectPathMatchesMCPGo(t *testing.T) {
	e2eSchema(t)
	for _, mode := range []string{"", "error_mode result"} {
		t.Run("mode="+mode, func(t *testing.T) {
			g := startGateway(t, e2eCaddyfile(t, mode))
			for _, version := range []string{"2025-03-26", "2025-11-25", "2026-07-28"} {
				s := &rawSession{url: g.URL, version: version} // 2026-07-28: no session
				if version != "2026-07-28" {
					s = g.rawSession(t, version)
				}
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
					var plain, viaMCPGo rpcResponse
					if s.session == "" { // no session: the protocol's fields in _meta
						plain = sessionlessCall(t, s, i, call.tool, call.args, "")
					} else {
						plain, _ = s.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i, call.tool, call.args))
					}
					if directCount() != before+1 {
						t.Fatalf("%s %s %s: the plain request did not take the direct path", version, call.tool, call.args)
					}
					if s.session == "" {
						viaMCPGo = sessionlessCall(t, s, i, call.tool, call.args, `"io.example/other":1`)
					} else {
						viaMCPGo, _ = s.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{}}}`, i, call.tool, call.args))
					}
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

// sessionlessCall posts a tools/call as a client on 2026-07-28 sends it: the
// protocol's fields in _meta (and extra, if any), and the standard headers.
func sessionlessCall(t *testing.T, s *rawSession, id int, tool, args, extra string) rpcResponse {
	t.Helper()
	meta := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}`
	if extra != "" {
		meta += "," + extra
	}
	r, _ := s.postWith(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{%s}}}`, id, tool, args, meta),
		map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": tool})
	return r
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

	// Without a session (2026-07-28): anything beyond the plainest
	// well-formed request is mcp-go's, which checks it and answers as it
	// always would.
	sessionless := &rawSession{url: g.URL, version: "2026-07-28"}
	const (
		version = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
		caps    = `"io.modelcontextprotocol/clientCapabilities":{}`
	)
	call := func(meta, extra string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-user","arguments":{"user_id":1},"_meta":{` + meta + `}` + extra + `}}`
	}
	std := map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "get-user"}
	with := func(k, v string) map[string]string {
		h := maps.Clone(std)
		h[k] = v
		return h
	}
	for _, tt := range []struct {
		name, body string
		header     map[string]string
		status     int // mcp-go's answer, when it is a refusal
	}{
		{"progress token", call(version+","+caps+`,"progressToken":"p"`, ""), std, 0},
		{"log level", call(version+","+caps+`,"io.modelcontextprotocol/logLevel":"debug"`, ""), std, 0},
		{"trace context", call(version+","+caps+`,"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`, ""), std, 0},
		{"no capabilities", call(version, ""), std, http.StatusBadRequest},
		{"capabilities not an object", call(version+`,"io.modelcontextprotocol/clientCapabilities":null`, ""), std, http.StatusBadRequest},
		{"header version differs", call(version+","+caps, ""), with("Mcp-Protocol-Version", "2025-11-25"), http.StatusBadRequest},
		{"no Mcp-Method", call(version+","+caps, ""), with("Mcp-Method", ""), http.StatusBadRequest},
		{"Mcp-Name differs", call(version+","+caps, ""), with("Mcp-Name", "list-users"), http.StatusBadRequest},
		{"Last-Event-ID", call(version+","+caps, ""), with("Last-Event-ID", "1"), http.StatusBadRequest},
		{"retry state", call(version+","+caps, `,"requestState":"x"`), std, 0},
		{"task", call(version+","+caps, `,"task":{"ttl":1000}`), std, 0},
	} {
		before := directCount()
		r, _ := sessionless.postWith(t, tt.body, tt.header)
		if directCount() != before {
			t.Errorf("2026-07-28 %s: answered by the direct path", tt.name)
		}
		if tt.status != 0 && r.Status != tt.status {
			t.Errorf("2026-07-28 %s: status %d, want mcp-go's %d", tt.name, r.Status, tt.status)
		}
	}
}

// TestMCPGoClientTakesDirectPath: mcp-go's own client, on its default
// protocol (2026-07-28, no session), gets the direct path for a plain
// call, and reads the answer as one from mcp-go: resultType complete, the
// server's identity in _meta, the rows in structuredContent.
func TestMCPGoClientTakesDirectPath(t *testing.T) {
	e2eSchema(t)
	g := startGateway(t, e2eCaddyfile(t, ""))
	c := g.mcpClient(t)
	before := directCount()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "get-user", map[string]any{"user_id": 1}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if directCount() != before+1 {
		t.Fatalf("mcp-go's client: %d calls on the direct path, want 1", directCount()-before)
	}
	if res.IsError || res.ResultType != mcp.ResultTypeComplete || res.Meta.ServerInfo() == nil || res.Meta.ServerInfo().Name != "e2e-gateway" {
		t.Fatalf("result %+v (meta %+v)", res, res.Meta)
	}
	if !strings.Contains(fmt.Sprint(res.StructuredContent), "ada@example.com") {
		t.Fatalf("structuredContent %v", res.StructuredContent)
	}
}
