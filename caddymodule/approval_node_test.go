package caddymodule

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// sdkApprovalRun is sdk-client.mjs's output with the elicitation requests
// the client received.
type sdkApprovalRun struct {
	ProtocolVersion string    `json:"protocolVersion"`
	Steps           []sdkStep `json:"steps"`
	Elicitations    []struct {
		Params struct {
			Message         string         `json:"message"`
			RequestedSchema map[string]any `json:"requestedSchema"`
		} `json:"params"`
		Action string `json:"action"`
	} `json:"elicitations"`
}

func runSDKApproval(t *testing.T, g *gateway, elicitation, steps string) sdkApprovalRun {
	t.Helper()
	t.Setenv("EDGEMCP_ELICITATION", elicitation)
	out, err := sdkClientRunner(t, nodeDir(t), g.URL, steps)(nil)
	if err != nil {
		t.Fatalf("sdk-client: %v\n%s", err, out)
	}
	var run sdkApprovalRun
	if err := json.Unmarshal(out, &run); err != nil {
		t.Fatalf("sdk-client output %s: %v", out, err)
	}
	return run
}

// The official TypeScript SDK client (a session protocol: the gateway
// sends elicitation/create on the call's stream) answering accept, decline
// and cancel, then one without the elicitation capability. Only the
// accepted call runs; each decision is one audit line.
func TestApprovalTypeScriptSDK(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	g := startGateway(t, approvalCaddyfile(t, ""), withLogFile(logFile))
	run := runSDKApproval(t, g, "accept", `[
		{"op":"call","name":"add-note","arguments":{"body":"kq7f3a91x"}},
		{"op":"elicitation","action":"decline"},
		{"op":"call","name":"add-note","arguments":{"body":"kq2c4e8zz"}},
		{"op":"elicitation","action":"cancel"},
		{"op":"call","name":"add-note","arguments":{"body":"kq9e6a0wv"}},
		{"op":"call","name":"count-notes","arguments":{}}
	]`)
	if run.ProtocolVersion == "" || strings.HasPrefix(run.ProtocolVersion, "2026") {
		t.Fatalf("protocol %q: this test is about the session protocols' elicitation/create", run.ProtocolVersion)
	}
	s := run.Steps
	if len(s) != 6 {
		t.Fatalf("steps %+v", s)
	}
	if s[0].Error != nil || s[0].Result == nil || s[0].Result.IsError {
		t.Fatalf("accepted add-note: %+v %+v", s[0].Error, s[0].Result)
	}
	for i, want := range map[int]string{2: "approval: declined", 4: "approval: declined (cancelled)"} {
		if e := s[i].Error; e == nil || e.Code != -32000 || e.Message != want {
			t.Errorf("step %d: %+v, want -32000 %q", i, e, want)
		}
	}
	if n := s[5].Result; n == nil || len(n.Content) != 1 || !strings.Contains(n.Content[0].Text, `"n":1`) {
		t.Errorf("count after accept, decline, cancel: %+v, want 1 note", n)
	}

	if len(run.Elicitations) != 3 {
		t.Fatalf("the client was asked %d times, want 3", len(run.Elicitations))
	}
	for i, body := range []string{"kq7f3a91x", "kq2c4e8zz", "kq9e6a0wv"} {
		e := run.Elicitations[i].Params
		if !strings.Contains(e.Message, `"add-note"`) || !strings.Contains(e.Message, `"body": "`+body+`"`) {
			t.Errorf("form %d does not name the tool and show its arguments:\n%s", i, e.Message)
		}
		if e.RequestedSchema["type"] != "object" {
			t.Errorf("form %d schema %v", i, e.RequestedSchema)
		}
	}

	none := runSDKApproval(t, g, "", `[{"op":"call","name":"add-note","arguments":{"body":"no capability"}}]`)
	want := `approval: tool "add-note" needs approval through elicitation: call it from an elicitation-capable client (one that declares the elicitation capability)`
	if e := none.Steps[0].Error; e == nil || e.Code != -32000 || e.Message != want {
		t.Errorf("a client without elicitation: %+v", e)
	}

	var decisions []string
	for _, l := range auditLines(t, logFile) {
		decisions = append(decisions, l["decision"].(string))
		if l["tool"] != "add-note" {
			t.Errorf("audit line %v", l)
		}
	}
	if got := strings.Join(decisions, ","); got != "approved,declined,cancelled,unsupported" {
		t.Errorf("audit decisions %s", got)
	}
	assertLogsClean(t, logFile, []string{"kq7f3a91x", "kq2c4e8zz", "kq9e6a0wv"})
}

// A client that never answers: the call fails with -32000 after
// approval_timeout instead of hanging, and does not run.
func TestApprovalTimeoutTypeScriptSDK(t *testing.T) {
	g := startGateway(t, approvalCaddyfile(t, "approval_timeout 1s"))
	run := runSDKApproval(t, g, "ignore", `[
		{"op":"call","name":"add-note","arguments":{"body":"never answered"}},
		{"op":"call","name":"count-notes","arguments":{}}
	]`)
	if e := run.Steps[0].Error; e == nil || e.Code != -32000 || e.Message != "approval: no answer within 1s" {
		t.Errorf("unanswered: %+v %+v", e, run.Steps[0].Result)
	}
	if n := run.Steps[1].Result; n == nil || !strings.Contains(n.Content[0].Text, `"n":0`) {
		t.Errorf("count after a timeout: %+v, want 0 notes", n)
	}
}

// `approval writes` on a source: server-everything (a stdio child) marks
// echo readOnlyHint true and toggle-simulated-logging false. echo runs
// without a question; the toggle is asked about, by its name and by the
// upstream's own name (an alias is the same tool), and declined.
func TestApprovalSourceWritesTypeScriptSDK(t *testing.T) {
	node, script := everything(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source every mcp stdio %s %s stdio {
			approval writes
		}
	}
}`, node, script))
	run := runSDKApproval(t, g, "decline", `[
		{"op":"call","name":"every_echo","arguments":{"message":"read only"}},
		{"op":"call","name":"every_toggle-simulated-logging","arguments":{}},
		{"op":"call","name":"toggle-simulated-logging","arguments":{}}
	]`)
	if r := run.Steps[0]; r.Error != nil || r.Result == nil || !strings.Contains(r.Result.Content[0].Text, "read only") {
		t.Errorf("every_echo (read-only): %+v %+v", r.Error, r.Result)
	}
	for _, i := range []int{1, 2} {
		if e := run.Steps[i].Error; e == nil || e.Code != -32000 || e.Message != "approval: declined" {
			t.Errorf("step %d: %+v %+v, want -32000 approval: declined", i, e, run.Steps[i].Result)
		}
	}
	if len(run.Elicitations) != 2 {
		t.Fatalf("asked %d times, want 2 (never for echo)", len(run.Elicitations))
	}
	for _, e := range run.Elicitations {
		if m := e.Params.Message; !strings.Contains(m, `"every_toggle-simulated-logging"`) || !strings.Contains(m, `It belongs to "every"`) {
			t.Errorf("form:\n%s", m)
		}
	}
}
