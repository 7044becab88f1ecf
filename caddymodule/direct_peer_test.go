//go:build linux

package caddymodule

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// startCountingUpstream serves an mcp-go upstream over streamable HTTP
// with an echo tool, and counts the calls that reach it.
func startCountingUpstream(t *testing.T) (url string, calls *atomic.Int64) {
	t.Helper()
	calls = &atomic.Int64{}
	s := server.NewMCPServer("counting-upstream", "1")
	s.AddTool(mcp.NewTool("echo", mcp.WithString("message")), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		calls.Add(1)
		return mcp.NewToolResultText("echo: " + req.GetString("message", "")), nil
	})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", calls
}

// rawPost posts body on s with header (an empty value deletes a header)
// and returns the status, the content type and the JSON messages of the
// answer (one, or an event stream's).
func rawPost(t *testing.T, s *rawSession, body string, header map[string]string) (int, string, []string) {
	t.Helper()
	res, raw := s.exchange(t, body, header)
	ct := res.Header.Get("Content-Type")
	var msgs []string
	if strings.HasPrefix(ct, "text/event-stream") {
		for _, line := range strings.Split(string(raw), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				msgs = append(msgs, canonicalJSON(t, d))
			}
		}
	} else if len(bytes.TrimSpace(raw)) > 0 && res.StatusCode == http.StatusOK {
		msgs = append(msgs, canonicalJSON(t, string(raw)))
	}
	return res.StatusCode, ct, msgs
}

func canonicalJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %q", s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// openSession initializes a session declaring caps, with header on every
// request.
func openSession(t *testing.T, g *gateway, caps string, header map[string]string) *rawSession {
	t.Helper()
	s := &rawSession{url: g.URL, version: "2025-11-25"}
	resp, hdr := s.postWith(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"raw","version":"1"}}}`, header)
	if resp.Error != nil || hdr.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %d %+v", resp.Status, resp.Error)
	}
	s.session = hdr.Get("Mcp-Session-Id")
	s.postWith(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, header)
	return s
}

const talkingTestKey = "direct-peer-test-key-5d1e8a"

// TestProxiedCallsOnDirectPath: a proxied tool's plain call, from a client
// that cannot answer requests, is answered on the direct path, with the
// same result mcp-go's dispatcher sends for it (the same call with _meta
// goes there): the conformance fixture's (tests/node) plain result, error
// result, log messages then the result in an event stream, and refused
// sampling request. A client that declared sampling, a
// tool under approval, and every request the gate, authentication or the
// endpoint's rate limit refuses never reach it.
func TestProxiedCallsOnDirectPath(t *testing.T) {
	up, calls := startCountingUpstream(t)
	conf := startConformanceUpstream(t) // forward_conformance_test.go
	t.Setenv("EDGEMCP_DIRECT_PEER_KEY", talkingTestKey)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		auth keys api_key {
			key {env.EDGEMCP_DIRECT_PEER_KEY} {
				subject peer
			}
		}
		default_auth keys
		source talk mcp %[2]s
		source up mcp %[1]s
		source gated mcp %[1]s {
			approval required
		}
	}
}`, up, conf))
	key := map[string]string{"X-API-Key": talkingTestKey}
	s := openSession(t, g, `{}`, key)

	// The conformance fixture logs at info, as part of the call: the
	// messages come before the result.
	if resp, _ := s.postWith(t, `{"jsonrpc":"2.0","id":100,"method":"logging/setLevel","params":{"level":"info"}}`, key); resp.Error != nil {
		t.Fatalf("logging/setLevel: %+v", resp.Error)
	}
	// The messages are passed on as the server sent them (no logger).
	logged := func(data string) string {
		return `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + data + `","level":"info"}}`
	}
	for i, tc := range []struct {
		tool, args string
		first      []string
	}{
		{"talk_test_simple_text", `{}`, nil},
		{"talk_test_error_handling", `{}`, nil},
		{"talk_test_tool_with_logging", `{}`, []string{logged("Tool execution started"), logged("Tool processing data"), logged("Tool execution completed")}},
		{"talk_test_sampling", `{"prompt":"hi"}`, nil},
	} {
		before := directCount()
		status, ct, direct := rawPost(t, s, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i+1, tc.tool, tc.args), key)
		if directCount() != before+1 {
			t.Fatalf("%s: the plain call did not take the direct path", tc.tool)
		}
		_, _, viaMCPGo := rawPost(t, s, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{}}}`, i+1, tc.tool, tc.args), key)
		if directCount() != before+1 {
			t.Fatalf("%s: the call with _meta took the direct path", tc.tool)
		}
		// The results must be the same. mcp-go's path may write a log
		// message late, on the session's next POST (its forwarder takes
		// the session's queue), so only the direct path's messages are
		// checked whole.
		if status != http.StatusOK || len(direct) == 0 || len(viaMCPGo) == 0 || direct[len(direct)-1] != viaMCPGo[len(viaMCPGo)-1] {
			t.Errorf("%s: %d %s\n direct %v\n mcp-go %v", tc.tool, status, ct, direct, viaMCPGo)
		}
		if tc.first != nil && (len(direct) != len(tc.first)+1 || strings.Join(direct[:len(tc.first)], "\n") != strings.Join(tc.first, "\n") ||
			!strings.HasPrefix(ct, "text/event-stream")) {
			t.Errorf("%s: want the log messages, then the result, in an event stream; got %s %v", tc.tool, ct, direct)
		}
		if tc.first == nil && (len(direct) != 1 || ct != "application/json") {
			t.Errorf("%s: want one JSON answer; got %s %v", tc.tool, ct, direct)
		}
	}
	if _, _, msgs := rawPost(t, s, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"talk_test_sampling","arguments":{"prompt":"hi"}}}`, key); len(msgs) != 1 ||
		!strings.Contains(msgs[0], "the gateway's client did not declare the sampling capability") {
		t.Errorf("sampling from a client without the capability: %v", msgs)
	}

	// A client that could answer the upstream's requests goes through
	// mcp-go, which forwards them.
	sampler := openSession(t, g, `{"sampling":{}}`, key)
	before := directCount()
	if _, _, msgs := rawPost(t, sampler, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"up_echo","arguments":{"message":"x"}}}`, key); len(msgs) != 1 || !strings.Contains(msgs[0], "echo: x") {
		t.Errorf("echo for a sampling client: %v", msgs)
	}
	if directCount() != before {
		t.Errorf("a client with the sampling capability took the direct path")
	}

	// One gate: what the mcp-go path refuses, the direct path refuses.
	upBefore, before := calls.Load(), directCount()
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"up_echo","arguments":{"message":"no"}}}`
	for _, tc := range []struct {
		name   string
		header map[string]string
		status int
	}{
		{"foreign origin", map[string]string{"X-API-Key": talkingTestKey, "Origin": "http://evil.example"}, http.StatusForbidden},
		{"no credentials", map[string]string{"X-API-Key": ""}, http.StatusUnauthorized},
		{"wrong key", map[string]string{"X-API-Key": "wrong-key-000000000000000"}, http.StatusUnauthorized},
	} {
		if status, _, _ := rawPost(t, s, call, tc.header); status != tc.status {
			t.Errorf("%s: HTTP %d, want %d", tc.name, status, tc.status)
		}
	}
	if directCount() != before {
		t.Errorf("the direct path answered refused requests")
	}
	_, _, msgs := rawPost(t, s, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"gated_echo","arguments":{"message":"no"}}}`, key)
	if len(msgs) != 1 || !strings.Contains(msgs[0], `needs approval through elicitation`) {
		t.Errorf("a tool under approval, from a client without elicitation: %v", msgs)
	}
	if directCount() != before {
		t.Errorf("a tool under approval took the direct path")
	}
	if n := calls.Load() - upBefore; n != 0 {
		t.Errorf("%d refused calls reached the upstream", n)
	}
}

// TestProxiedDirectPathRateLimited: over the endpoint's rate limit a
// proxied call is refused with 429 before either path sees it.
func TestProxiedDirectPathRateLimited(t *testing.T) {
	up, calls := startCountingUpstream(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		rate_limit 4 per 1h by tool
		source up mcp %s
	}
}`, up))
	s := openSession(t, g, `{}`, nil) // two requests of the four
	before := directCount()
	if _, _, msgs := rawPost(t, s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"up_echo","arguments":{"message":"a"}}}`, nil); len(msgs) != 1 || !strings.Contains(msgs[0], "echo: a") {
		t.Fatalf("first call: %v", msgs)
	}
	if directCount() != before+1 {
		t.Fatalf("the first call did not take the direct path")
	}
	rawPost(t, s, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"up_echo","arguments":{"message":"b"}}}`, nil)
	upBefore := calls.Load()
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"up_echo","arguments":{"message":"c"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"up_echo","arguments":{"message":"c"},"_meta":{}}}`,
	} {
		if status, _, _ := rawPost(t, s, body, nil); status != http.StatusTooManyRequests {
			t.Errorf("over the limit: HTTP %d, want 429", status)
		}
	}
	if calls.Load() != upBefore || directCount() != before+2 {
		t.Errorf("calls over the limit ran: upstream %d, direct %d", calls.Load()-upBefore, directCount()-before)
	}
}
