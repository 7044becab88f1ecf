package caddymodule

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// startTalkingUpstream serves an mcp-go upstream over streamable HTTP with
// tools that say nothing (echo), log while they run (chatty) and send a
// sampling request (ask), and counts the calls that reach it.
func startTalkingUpstream(t *testing.T) (url string, calls *atomic.Int64) {
	t.Helper()
	calls = &atomic.Int64{}
	s := server.NewMCPServer("talking-upstream", "1", server.WithLogging())
	s.AddTool(mcp.NewTool("echo", mcp.WithString("message")), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		calls.Add(1)
		return mcp.NewToolResultText("echo: " + req.GetString("message", "")), nil
	})
	s.AddTool(mcp.NewTool("chatty"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		calls.Add(1)
		n := mcp.NewLoggingMessageNotification(mcp.LoggingLevelError, "up", "careful")
		if err := server.ServerFromContext(ctx).SendLogMessageToClient(ctx, n); err != nil {
			return nil, err
		}
		return mcp.NewToolResultText("said it"), nil
	})
	s.AddTool(mcp.NewTool("ask"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		calls.Add(1)
		req := mcp.CreateMessageRequest{}
		req.Messages = []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("hi")}}
		req.MaxTokens = 5
		res, err := server.ServerFromContext(ctx).RequestSampling(ctx, req)
		if err != nil {
			return mcp.NewToolResultError("sampling: " + err.Error()), nil
		}
		return mcp.NewToolResultText(fmt.Sprint(res.Content)), nil
	})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", calls
}

// rawPost posts body on s with header and returns the status, the content
// type and the JSON messages of the answer (one, or an event stream's).
func rawPost(t *testing.T, s *rawSession, body string, header map[string]string) (int, string, []string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.session)
	req.Header.Set("Mcp-Protocol-Version", s.version)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	ct := res.Header.Get("Content-Type")
	var msgs []string
	if strings.HasPrefix(ct, "text/event-stream") {
		for _, line := range strings.Split(string(raw), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				msgs = append(msgs, canonicalJSON(t, d))
			}
		}
	} else if len(bytes.TrimSpace(raw)) > 0 {
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
// goes there): a plain result, a log message then the result in an event
// stream, a refused sampling request. A client that declared sampling, a
// tool under approval, and every request the gate, authentication or the
// endpoint's rate limit refuses never reach it.
func TestProxiedCallsOnDirectPath(t *testing.T) {
	up, calls := startTalkingUpstream(t)
	t.Setenv("EDGEMCP_DIRECT_PEER_KEY", talkingTestKey)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		auth keys api_key {
			key {env.EDGEMCP_DIRECT_PEER_KEY} {
				subject peer
			}
		}
		default_auth keys
		source up mcp %[1]s
		source gated mcp %[1]s {
			approval required
		}
	}
}`, up))
	key := map[string]string{"X-API-Key": talkingTestKey}
	s := openSession(t, g, `{}`, key)

	for i, tc := range []struct{ tool, args, first string }{
		{"up_echo", `{"message":"hi"}`, ""},
		{"up_chatty", `{}`, `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"careful","level":"error","logger":"up"}}`},
		{"up_ask", `{}`, ""},
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
		// the session's queue), so only the direct path's is checked.
		if status != http.StatusOK || len(direct) == 0 || len(viaMCPGo) == 0 || direct[len(direct)-1] != viaMCPGo[len(viaMCPGo)-1] {
			t.Errorf("%s: %d %s\n direct %v\n mcp-go %v", tc.tool, status, ct, direct, viaMCPGo)
		}
		if tc.first != "" && (len(direct) != 2 || direct[0] != tc.first || !strings.HasPrefix(ct, "text/event-stream")) {
			t.Errorf("%s: want the log message, then the result, in an event stream; got %s %v", tc.tool, ct, direct)
		}
		if tc.first == "" && (len(direct) != 1 || ct != "application/json") {
			t.Errorf("%s: want one JSON answer; got %s %v", tc.tool, ct, direct)
		}
	}
	if _, _, msgs := rawPost(t, s, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"up_ask","arguments":{}}}`, key); len(msgs) != 1 ||
		!strings.Contains(msgs[0], "sampling/createMessage error -32603: the gateway's client did not declare the sampling capability") {
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
	upBefore := calls.Load()
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"up_echo","arguments":{"message":"no"}}}`
	for _, tc := range []struct {
		name   string
		header map[string]string
		status int
		want   string
	}{
		{"foreign origin", map[string]string{"X-API-Key": talkingTestKey, "Origin": "http://evil.example"}, http.StatusForbidden, ""},
		{"no credentials", map[string]string{"X-API-Key": ""}, http.StatusUnauthorized, ""},
		{"wrong key", map[string]string{"X-API-Key": "wrong-key-000000000000000"}, http.StatusUnauthorized, ""},
	} {
		hdr := map[string]string{}
		for k, v := range tc.header {
			hdr[k] = v
		}
		req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(call))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", s.session)
		req.Header.Set("Mcp-Protocol-Version", s.version)
		for k, v := range hdr {
			if v != "" {
				req.Header.Set(k, v)
			}
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != tc.status {
			t.Errorf("%s: HTTP %d, want %d", tc.name, res.StatusCode, tc.status)
		}
	}
	before = directCount()
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
	up, calls := startTalkingUpstream(t)
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
