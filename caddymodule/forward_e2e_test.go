//go:build linux

package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
)

// forwardRun is what tests/node/sdk-client.mjs reports of a run with
// client answers: the steps, the server's requests it answered and the
// log messages it got.
type forwardRun struct {
	Steps []struct {
		Op       string      `json:"op"`
		Name     string      `json:"name"`
		Tools    []mcpTooly  `json:"tools"`
		Result   *toolResult `json:"result"`
		Progress []struct {
			Progress float64 `json:"progress"`
			Total    float64 `json:"total"`
		} `json:"progress"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"steps"`
	Requests []struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"requests"`
	Logs []struct {
		Level string `json:"level"`
		Data  any    `json:"data"`
	} `json:"logs"`
}

type mcpTooly struct {
	Name string `json:"name"`
}

// TestMCPSourceForwardsToClient: server-everything, as a stdio child and
// over streamable HTTP, behind the gateway, driven by the official
// TypeScript SDK client: its progress arrives under the client's own
// progressToken, its sampling and elicitation requests reach the client
// and the client's answers reach the tool, its log messages reach the
// client's session, and a call the client cancels at its first progress
// notification ends without harm to the next call. The client's roots do
// not reach a session every caller shares: the gateway does not declare
// roots there, so the server does not list get-roots-list.
func TestMCPSourceForwardsToClient(t *testing.T) {
	dir := nodeDir(t)
	node, script := everything(t)
	streamable := startEverythingHTTP(t, "streamableHttp")
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source ev mcp stdio %s %s stdio
		source web mcp %s/mcp
	}
}`, node, script, streamable))

	for _, ns := range []string{"ev", "web"} {
		t.Run(ns, func(t *testing.T) {
			out, err := sdkClientRunner(t, dir, g.URL, fmt.Sprintf(`{
	"client": {
		"sampling": {"role":"assistant","content":{"type":"text","text":"forty-two"},"model":"test-model","stopReason":"endTurn"},
		"elicitation": {"action":"accept","content":{"name":"Ada Lovelace","check":true}},
		"roots": [{"uri":"file:///work/ada","name":"ada's work"}]
	},
	"steps": [
		{"op":"list"},
		{"op":"set_level","level":"debug"},
		{"op":"call","name":"%[1]s_trigger-long-running-operation","arguments":{"duration":0.2,"steps":2},"progress":true},
		{"op":"call","name":"%[1]s_trigger-sampling-request","arguments":{"prompt":"the answer?","maxTokens":10}},
		{"op":"call","name":"%[1]s_trigger-elicitation-request","arguments":{}},
		{"op":"call","name":"%[1]s_toggle-simulated-logging","arguments":{}},
		{"op":"call","name":"%[1]s_trigger-long-running-operation","arguments":{"duration":60,"steps":60},"cancelOnProgress":true},
		{"op":"call","name":"%[1]s_echo","arguments":{"message":"still here"}}
	]
}`, ns))(nil)
			if err != nil {
				t.Fatalf("sdk-client: %v\n%s", err, out)
			}
			var run forwardRun
			if err := json.Unmarshal(out, &run); err != nil || len(run.Steps) != 8 {
				t.Fatalf("sdk-client output %s: %v", out, err)
			}
			listed := map[string]bool{}
			for _, tl := range run.Steps[0].Tools {
				listed[tl.Name] = true
			}
			// server-everything lists these only to a client that declared
			// sampling, elicitation and roots: the gateway declares the
			// first two upstream, and roots only on a caller's own session.
			for _, want := range []string{"_trigger-sampling-request", "_trigger-elicitation-request"} {
				if !listed[ns+want] {
					t.Errorf("tools/list lacks %s%s", ns, want)
				}
			}
			if listed[ns+"_get-roots-list"] {
				t.Errorf("the gateway declared roots on a session every caller shares")
			}

			// Two steps, two notifications upstream. The last one comes
			// just before the result, and mcp-go may write it on the
			// client's GET stream, where it can arrive after the result and
			// be dropped by the client: the first one must arrive.
			if p := run.Steps[2]; p.Error != nil || len(p.Progress) == 0 || p.Progress[0].Progress != 1 || p.Progress[0].Total != 2 {
				t.Errorf("progress: %+v", p)
			}

			stepText := func(i int) string {
				s := run.Steps[i]
				if s.Error != nil || s.Result == nil {
					t.Errorf("step %d (%s): %+v", i, s.Name, s.Error)
					return ""
				}
				var b strings.Builder
				for _, c := range s.Result.Content {
					b.WriteString(c.Text)
				}
				return b.String()
			}
			if got := stepText(3); !strings.Contains(got, "forty-two") || !strings.Contains(got, "test-model") {
				t.Errorf("sampling result: %s", got)
			}
			if got := stepText(4); !strings.Contains(got, "Name: Ada Lovelace") || !strings.Contains(got, "Agreed to terms: true") {
				t.Errorf("elicitation result: %s", got)
			}
			methods := map[string]int{}
			for _, r := range run.Requests {
				methods[r.Method]++
				if r.Method == "sampling/createMessage" && !strings.Contains(string(r.Params), "the answer?") {
					t.Errorf("sampling request as the client got it: %s", r.Params)
				}
				if r.Method == "elicitation/create" && !strings.Contains(string(r.Params), `"requestedSchema"`) {
					t.Errorf("elicitation request as the client got it: %s", r.Params)
				}
			}
			if methods["sampling/createMessage"] != 1 || methods["elicitation/create"] != 1 || methods["roots/list"] != 0 {
				t.Errorf("requests the client answered: %v", methods)
			}
			// toggle-simulated-logging sends its first message (of a
			// random level: the client asked for debug) right away.
			found := false
			for _, l := range run.Logs {
				if s, _ := l.Data.(string); strings.Contains(s, "-level message") || strings.Contains(s, "level-message") {
					found = true
				}
			}
			if !found {
				t.Errorf("the upstream's log message did not reach the client: %+v", run.Logs)
			}

			if c := run.Steps[6]; c.Error == nil || len(c.Progress) == 0 {
				t.Errorf("cancelled call: %+v", c)
			}
			if got := stepText(7); got != "Echo: still here" {
				t.Errorf("call after the cancelled one: %q", got)
			}
		})
	}
}

// TestMCPSourceLargeToolsList: an upstream with 1,200 tools, listed 100 a
// page, is discovered whole, and the gateway lists it in pages of
// fastpath.PageSize with nextCursor.
func TestMCPSourceLargeToolsList(t *testing.T) {
	up := server.NewMCPServer("many", "1", server.WithPaginationLimit(100))
	const n = 1200
	for i := range n {
		up.AddTool(mcp.NewTool(fmt.Sprintf("t%04d", i), mcp.WithDescription("tool")), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ran " + req.Params.Name), nil
		})
	}
	hs := httptest.NewServer(server.NewStreamableHTTPServer(up))
	t.Cleanup(hs.Close)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source up mcp %s/mcp {
			required
		}
	}
}`, hs.URL))
	s := g.rawSession(t, "2025-06-18")
	seen := map[string]bool{}
	pages := 0
	cursor := ""
	for {
		params := "{}"
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		resp, _ := s.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":%s}`, 10+pages, params))
		var page struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if resp.Error != nil || json.Unmarshal(resp.Result, &page) != nil {
			t.Fatalf("tools/list page %d: %+v %s", pages, resp.Error, resp.Result)
		}
		pages++
		if len(page.Tools) > fastpath.PageSize {
			t.Errorf("page %d holds %d tools", pages, len(page.Tools))
		}
		for _, tl := range page.Tools {
			if seen[tl.Name] {
				t.Errorf("%s listed twice", tl.Name)
			}
			seen[tl.Name] = true
		}
		if page.NextCursor == "" || pages > 10 {
			break
		}
		cursor = page.NextCursor
	}
	if len(seen) != n || !seen["up_t0000"] || !seen["up_t1199"] || pages != 3 {
		t.Errorf("listed %d tools in %d pages", len(seen), pages)
	}
	if r := s.call(t, "up_t1199", map[string]any{}).tool(t); len(r.Content) != 1 || r.Content[0].Text != "ran t1199" {
		t.Errorf("up_t1199: %+v", r)
	}
}

// TestMCPSourceLogsWithoutLevel: the log messages an upstream sends during
// a call reach a client that never set a log level, as they would directly
// (mcp-go's own default would hold back everything below error), over a
// stdio and an HTTP source; a client that set a level gets only those at
// or above it.
func TestMCPSourceLogsWithoutLevel(t *testing.T) {
	dir := nodeDir(t)
	node := node22(t, dir)
	up := startConformanceUpstream(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source web mcp %s
		source local mcp stdio %s %s/conformance-upstream.mjs --stdio
	}
}`, up, node, dir))
	for _, ns := range []string{"web", "local"} {
		for _, level := range []string{"", "warning"} {
			steps := fmt.Sprintf(`[{"op":"call","name":"%s_test_tool_with_logging","arguments":{}}]`, ns)
			if level != "" {
				steps = fmt.Sprintf(`[{"op":"set_level","level":%q},{"op":"call","name":"%s_test_tool_with_logging","arguments":{}}]`, level, ns)
			}
			out, err := sdkClientRunner(t, dir, g.URL, steps)(nil)
			var run forwardRun
			if err != nil || json.Unmarshal(out, &run) != nil {
				t.Fatalf("sdk-client: %v\n%s", err, out)
			}
			var got []string
			for _, l := range run.Logs {
				got = append(got, fmt.Sprint(l.Data))
			}
			want := []string{"Tool execution started", "Tool processing data", "Tool execution completed"}
			if level != "" {
				want = nil // the fixture logs at info
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("%s, level %q: log messages %q, want %q", ns, level, got, want)
			}
		}
	}
}
