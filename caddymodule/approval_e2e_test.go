package caddymodule

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// approvalCaddyfile serves a SQLite notes table: add-note writes (its
// connector's `approval writes` asks before it runs), count-notes is
// annotated read-only (never asked), purge-notes is exempted (`approval
// off`). extra goes into the mcp block.
func approvalCaddyfile(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed.sql")
	writeFile(t, seed, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);\n")
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		%s
		connector notes sqlite %s {
			seed %s
			approval writes
		}
		tool add-note {
			description "Add a note"
			use notes
			statement "INSERT INTO notes (body) VALUES ({{ inputs.body }}) RETURNING id"
			input body string required "The note"
		}
		tool count-notes {
			description "Count the notes"
			use notes
			statement "SELECT count(*) AS n FROM notes"
			annotations {
				read_only
			}
		}
		tool purge-notes {
			description "Delete every note"
			use notes
			statement "DELETE FROM notes RETURNING id"
			approval off
		}
	}
}`, extra, filepath.Join(dir, "notes.db"), seed)
}

// noteCount reads the table through count-notes.
func noteCount(t *testing.T, s *rawSession) string {
	t.Helper()
	rows := s.call(t, "count-notes", map[string]any{}).tool(t).rows(t)
	return fmt.Sprint(rows[0]["n"])
}

// auditLines are the approval decisions in a log file, in order.
func auditLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range readLog(t, path) {
		if l["logger"] == "http.handlers.mcp.audit" {
			out = append(out, l)
		}
	}
	return out
}

// The direct path answers plain calls itself; a tool under approval is
// never among them. A client without the elicitation capability, on a
// request the direct path would otherwise take, gets -32000 naming what it
// lacks, the statement never runs, and the refusal is audited. Tools the
// policy does not cover still go direct.
func TestApprovalNeverOnDirectPath(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	g := startGateway(t, approvalCaddyfile(t, ""), withLogFile(logFile))
	s := g.rawSession(t, "2025-11-25")

	before := directCount()
	for i := 0; i < 3; i++ {
		resp := s.call(t, "add-note", map[string]any{"body": "secret-note-text"})
		want := `approval: tool "add-note" needs approval through elicitation: call it from an elicitation-capable client (one that declares the elicitation capability)`
		if resp.Error == nil || resp.Error.Code != -32000 || resp.Error.Message != want {
			t.Fatalf("add-note without elicitation: %+v %s", resp.Error, resp.Result)
		}
	}
	if n := directCount() - before; n != 0 {
		t.Fatalf("the direct path answered %d calls of a tool under approval", n)
	}
	if n := noteCount(t, s); n != "0" {
		t.Fatalf("%s notes: add-note ran without approval", n)
	}
	if directCount()-before != 1 {
		t.Errorf("count-notes (read-only, no approval) should have gone direct")
	}
	// approval off: runs at once, directly.
	if res := s.call(t, "purge-notes", map[string]any{}); res.Error != nil {
		t.Fatalf("purge-notes: %+v", res.Error)
	}
	if directCount()-before != 2 {
		t.Errorf("purge-notes (approval off) should have gone direct")
	}

	audit := auditLines(t, logFile)
	if len(audit) != 3 {
		t.Fatalf("%d audit lines, want one per decision (3): %v", len(audit), audit)
	}
	for _, l := range audit {
		if l["tool"] != "add-note" || l["decision"] != "unsupported" || l["msg"] != "approval" {
			t.Errorf("audit line %v", l)
		}
		if h, _ := l["args_hash"].(string); len(h) != 32 || h != audit[0]["args_hash"] {
			t.Errorf("args_hash %q: want 32 hex digits, equal for equal arguments", h)
		}
		if _, ok := l["latency"].(float64); !ok {
			t.Errorf("audit line without latency: %v", l)
		}
		if _, ok := l["subject"]; !ok {
			t.Errorf("audit line without subject: %v", l)
		}
	}
	assertLogsClean(t, logFile, []string{"secret-note-text"})
}

// mcpGoElicitor answers elicitation/create (or, on 2026-07-28, the
// input_required round trip) with a fixed action after an optional pause,
// recording what it was asked.
type mcpGoElicitor struct {
	action mcp.ElicitationResponseAction
	pause  time.Duration
	asked  []mcp.ElicitationParams
}

func (e *mcpGoElicitor) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.asked = append(e.asked, req.Params)
	time.Sleep(e.pause)
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: e.action}}, nil
}

// elicitingMCPGoClient is an initialized mcp-go client (protocol
// 2026-07-28: approval travels as an input_required result and a retry)
// that declares elicitation and answers through e.
func elicitingMCPGoClient(t *testing.T, url string, e *mcpGoElicitor) *client.Client {
	return elicitingMCPGoClientAt(t, url, e, mcp.LATEST_PROTOCOL_VERSION)
}

// elicitingMCPGoClientAt is the same client on a given protocol version;
// on a version with sessions the gateway sends elicitation/create.
func elicitingMCPGoClientAt(t *testing.T, url string, e *mcpGoElicitor, version string) *client.Client {
	t.Helper()
	trans, err := transport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	opts := []client.ClientOption{client.WithElicitationHandler(e)}
	if !mcp.IsModernProtocol(version) {
		opts = append(opts, client.WithLegacyProtocolOnly())
	}
	c := client.NewClient(trans, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = version
	req.Params.ClientInfo = mcp.Implementation{Name: "edgemcp-approval-test", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if res.ProtocolVersion != version {
		t.Fatalf("negotiated %s, want %s", res.ProtocolVersion, version)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func callWithAnswer(t *testing.T, c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	return c.CallTool(ctx, req)
}

// On 2026-07-28 the question travels in the answer: mcp-go's client
// answers the input_required result through its elicitation handler and
// calls again; accept runs the tool once, decline and cancel do not, an
// answer slower than approval_timeout is refused, and a client without
// the capability is told what it lacks.
func TestApprovalMultiRoundTripMCPGo(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	g := startGateway(t, approvalCaddyfile(t, "approval_timeout 1s"), withLogFile(logFile))
	raw := g.rawSession(t, "2025-11-25")

	accept := &mcpGoElicitor{action: mcp.ElicitationResponseActionAccept}
	res, err := callWithAnswer(t, elicitingMCPGoClient(t, g.URL, accept), "add-note", map[string]any{"body": "from mcp-go"})
	if err != nil || res.IsError {
		t.Fatalf("accepted add-note: %v %+v", err, res)
	}
	if len(accept.asked) != 1 {
		t.Fatalf("asked %d times, want once", len(accept.asked))
	}
	msg := accept.asked[0].Message
	if !strings.Contains(msg, `"add-note"`) || !strings.Contains(msg, `"body": "from mcp-go"`) {
		t.Errorf("the form does not name the tool and show its arguments:\n%s", msg)
	}
	if n := noteCount(t, raw); n != "1" {
		t.Fatalf("%s notes after one approved call, want 1", n)
	}

	for _, tt := range []struct {
		answer *mcpGoElicitor
		want   string
	}{
		{&mcpGoElicitor{action: mcp.ElicitationResponseActionDecline}, "approval: declined"},
		{&mcpGoElicitor{action: mcp.ElicitationResponseActionCancel}, "approval: declined (cancelled)"},
		// Slower than approval_timeout: a lower bound on time only.
		{&mcpGoElicitor{action: mcp.ElicitationResponseActionAccept, pause: 1500 * time.Millisecond}, "approval: no answer within 1s"},
	} {
		_, err := callWithAnswer(t, elicitingMCPGoClient(t, g.URL, tt.answer), "add-note", map[string]any{"body": "refused"})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s answer: got %v, want %q", tt.answer.action, err, tt.want)
		}
	}
	_, err = callWithAnswer(t, g.mcpClient(t), "add-note", map[string]any{"body": "refused"})
	if err == nil || !strings.Contains(err.Error(), "call it from an elicitation-capable client") {
		t.Errorf("a client without elicitation: %v", err)
	}
	if n := noteCount(t, raw); n != "1" {
		t.Fatalf("%s notes: a refused call ran", n)
	}

	var decisions []string
	for _, l := range auditLines(t, logFile) {
		decisions = append(decisions, fmt.Sprint(l["decision"]))
	}
	if got := strings.Join(decisions, ","); got != "approved,declined,cancelled,timeout,unsupported" {
		t.Errorf("audit decisions %s", got)
	}
}

// mcp-go's client on a session protocol: the gateway's elicitation/create
// reaches its handler on the call's stream; accept runs the tool once,
// decline does not.
func TestApprovalElicitationRequestMCPGo(t *testing.T) {
	g := startGateway(t, approvalCaddyfile(t, ""))
	raw := g.rawSession(t, "2025-11-25")
	accept := &mcpGoElicitor{action: mcp.ElicitationResponseActionAccept}
	res, err := callWithAnswer(t, elicitingMCPGoClientAt(t, g.URL, accept, "2025-11-25"), "add-note", map[string]any{"body": "legacy"})
	if err != nil || res.IsError {
		t.Fatalf("accepted add-note: %v %+v", err, res)
	}
	if len(accept.asked) != 1 || !strings.Contains(accept.asked[0].Message, `"body": "legacy"`) {
		t.Fatalf("asked %+v", accept.asked)
	}
	decline := &mcpGoElicitor{action: mcp.ElicitationResponseActionDecline}
	_, err = callWithAnswer(t, elicitingMCPGoClientAt(t, g.URL, decline, "2025-11-25"), "add-note", map[string]any{"body": "no"})
	if err == nil || !strings.Contains(err.Error(), "approval: declined") || len(decline.asked) != 1 {
		t.Errorf("declined add-note: %v (asked %d times)", err, len(decline.asked))
	}
	if n := noteCount(t, raw); n != "1" {
		t.Fatalf("%s notes, want the accepted one", n)
	}
}
