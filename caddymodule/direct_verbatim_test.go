package caddymodule

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
)

// verbatimResult is what rawMCPUpstream answers every tools/call with:
// keys in an order mcp-go would not write, fields it does not model (at
// the top, in a content block, in _meta), isError false, which mcp-go
// drops, and white space of the server's own in none of it.
const verbatimResult = `{"zeta":{"b":1,"a":2},"content":[{"text":"hi","type":"text","x-block":true}],"isError":false,"_meta":{"up/trace":"t1"}}`

// rawMCPUpstream is a streamable HTTP MCP server without a session that
// writes its answers by hand, so that its bytes are not mcp-go's: one
// tool, "raw", whose result is verbatimResult.
func rawMCPUpstream(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no stream", http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 {
			w.WriteHeader(http.StatusAccepted) // a notification
			return
		}
		var result string
		switch msg.Method {
		case "initialize":
			result = fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`, msg.Params.ProtocolVersion)
		case "tools/list":
			result = `{"tools":[{"name":"raw","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			result = verbatimResult
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`, msg.ID)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestDirectPathWritesUpstreamBytes: an MCP server's tools/call result
// reaches the client as the server wrote it (docs/sources.md, MCP
// servers), on the direct path and through mcp-go (a _meta in the request
// sends it there), the same bytes on both; on 2026-07-28 (mcp-go: a
// source's tools may talk to the client) with resultType and the
// gateway's identity added to the server's _meta.
func TestDirectPathWritesUpstreamBytes(t *testing.T) {
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source up mcp %s {
			transport streamable
			required
		}
	}
}`, rawMCPUpstream(t)))
	const call = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"up_raw","arguments":{}%s}}`
	for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
		s := g.rawSession(t, version)
		before := directCount()
		direct, _ := s.post(t, fmt.Sprintf(call, 1, ""))
		if directCount() != before+1 {
			t.Fatalf("%s: the plain call did not take the direct path", version)
		}
		viaMCPGo, _ := s.post(t, fmt.Sprintf(call, 2, `,"_meta":{"progressToken":"p"}`))
		if directCount() != before+1 {
			t.Fatalf("%s: the call with a progress token took the direct path", version)
		}
		if string(direct.Result) != verbatimResult || string(viaMCPGo.Result) != verbatimResult {
			t.Errorf("%s:\n direct %s %+v\n mcp-go %s %+v\n want   %s", version, direct.Result, direct.Error, viaMCPGo.Result, viaMCPGo.Error, verbatimResult)
		}
	}
	s := &rawSession{url: g.URL, version: "2026-07-28"}
	r := sessionlessCall(t, s, 3, "up_raw", "{}", "")
	info := jsonrpc.Member(jsonrpc.Member(r.Result, "_meta"), "io.modelcontextprotocol/serverInfo")
	var named struct{ Name string }
	if json.Unmarshal(info, &named) != nil || named.Name != "edgemcp" {
		t.Errorf("2026-07-28: serverInfo %s, want the gateway's", info)
	}
	want := `{"zeta":{"b":1,"a":2},"content":[{"text":"hi","type":"text","x-block":true}],"isError":false,` +
		`"_meta":{"up/trace":"t1","io.modelcontextprotocol/serverInfo":` + string(info) + `},"resultType":"complete"}`
	if string(r.Result) != want {
		t.Errorf("2026-07-28:\n got  %s %+v\n want %s", r.Result, r.Error, want)
	}
}
