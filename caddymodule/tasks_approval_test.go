package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/caddymodule/approval"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

// A tool under an approval policy runs as a task once approved, on
// 2026-07-28: the approval's input_required comes first (no task yet),
// and the retry that carries the answer becomes the task (docs/tasks.md,
// "When a call becomes a task"). Before 2026-07-28 the approval is an
// elicitation on the call's stream: such a tool is listed and answered as
// one that does not run as a task.

// approvalTasksCaddyfile serves, behind a JWT default_auth, gated (its
// connector's approval and task defaults, a task only), asked (its own
// approval and task lines) and slow (a task, no approval); marker tags
// the statements.
func approvalTasksCaddyfile(t *testing.T, idp *testIdP, marker string) string {
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		%s
		connector main postgres %s {
			statement_timeout 60s
		}
		connector gate postgres %s {
			statement_timeout 60s
			approval required
			task required ttl 10m
		}
		tool gated {
			description "Asks first, then runs only as a task"
			use gate
			statement "SELECT '%s' AS tag, pg_sleep({{ inputs.seconds }}) IS NOT NULL AS slept"
			input seconds float required
		}
		tool asked {
			description "Asks first, then may run as a task"
			use main
			statement "SELECT '%s' AS tag, 7 AS answer"
			approval required
			task optional
		}
		tool slow {
			description "Sleeps, then says so"
			use main
			statement "SELECT '%s' AS tag, pg_sleep({{ inputs.seconds }}) IS NOT NULL AS slept"
			input seconds float required
			task optional ttl 10m
		}
	}
}`, jwtDefaultAuth(idp), postgresURL(t), postgresURL(t), marker, marker, marker)
}

// approvalTaskCall is a 2026-07-28 request of method from a client that
// declares elicitation and the tasks extension, with header; more goes
// into params beside _meta.
func approvalTaskCall(t *testing.T, url string, header map[string]string, method, name string, more map[string]any) rpcResponse {
	t.Helper()
	p := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{},
			"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
		"io.modelcontextprotocol/clientInfo": map[string]any{"name": "raw", "version": "1"},
	}}
	for k, v := range more {
		p[k] = v
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": p})
	h := map[string]string{"Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	for k, v := range header {
		h[k] = v
	}
	r, _ := (&rawSession{url: url, version: "2026-07-28"}).postWith(t, string(body), h)
	return r
}

// approvalQuestion is the input_required answer of a call under approval.
type approvalQuestion struct {
	ResultType   string                     `json:"resultType"`
	RequestState string                     `json:"requestState"`
	Inputs       map[string]json.RawMessage `json:"inputRequests"`
	TaskID       *string                    `json:"taskId"`
}

// TestTaskAfterApprovalModern: on 2026-07-28 a task-only tool under its
// connector's approval policy first answers input_required, without a
// task; the retry that accepts becomes a task alice owns, which completes
// with the statement's result; bob gets for it what an unknown id gets.
// The same retry again is refused (the answer is spent) and makes no
// task, and a declined one makes none either. A tool with its own
// approval and task lines loads and runs the same way.
func TestTaskAfterApprovalModern(t *testing.T) {
	idp := newTestIdP(t)
	marker := fmt.Sprintf("task-approval-%d", time.Now().UnixNano())
	g := startGateway(t, approvalTasksCaddyfile(t, idp, marker))
	alice := bearer(idp.token(t, "alice", "", nil, time.Hour))
	bob := bearer(idp.token(t, "bob", "", nil, time.Hour))
	args := map[string]any{"name": "gated", "arguments": map[string]any{"seconds": 0.3}}

	ask := func(name string, args map[string]any) approvalQuestion {
		t.Helper()
		r := approvalTaskCall(t, g.URL, alice, "tools/call", name, args)
		var q approvalQuestion
		if r.Error != nil || json.Unmarshal(r.Result, &q) != nil || q.ResultType != "input_required" || q.RequestState == "" || q.Inputs[approval.InputName] == nil || q.TaskID != nil {
			t.Fatalf("the question of %s: %+v %s", name, r.Error, r.Result)
		}
		return q
	}
	answer := func(args map[string]any, q approvalQuestion, action string) map[string]any {
		out := map[string]any{"inputResponses": map[string]any{approval.InputName: map[string]any{"action": action, "content": map[string]any{}}},
			"requestState": q.RequestState}
		for k, v := range args {
			out[k] = v
		}
		return out
	}

	retry := answer(args, ask("gated", args), "accept")
	r := approvalTaskCall(t, g.URL, alice, "tools/call", "gated", retry)
	handle := r.detailed(t)
	if handle.ResultType != "task" || handle.TaskID == "" || handle.TTLMs == nil || *handle.TTLMs != 600000 || strings.Contains(string(r.Result), "requestState") {
		t.Fatalf("the approved call: %s", r.Result)
	}
	get := func(who map[string]string, id string) rpcResponse {
		return approvalTaskCall(t, g.URL, who, "tasks/get", "", map[string]any{"taskId": id})
	}
	var done detailed
	for deadline := time.Now().Add(10 * time.Second); done.Status != "completed"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still %+v after 10s", done)
		}
		done = get(alice, handle.TaskID).detailed(t)
	}
	if !strings.Contains(string(done.Result), marker) || !strings.Contains(string(done.Result), `\"slept\":true`) {
		t.Fatalf("the task's result: %s", done.Result)
	}
	unknown := get(bob, "AAAAAAAAAAAAAAAAAAAAAA")
	if unknown.Error == nil || unknown.Error.Code != -32602 {
		t.Fatalf("an unknown id: %+v %s", unknown.Error, unknown.Result)
	}
	if got := get(bob, handle.TaskID); got.Error == nil || *got.Error != *unknown.Error {
		t.Fatalf("bob on alice's task: %+v %s, want %+v", got.Error, got.Result, unknown.Error)
	}

	const reused = "approval: the answer was already used for a call: call again without it to be asked again"
	if r := approvalTaskCall(t, g.URL, alice, "tools/call", "gated", retry); r.Error == nil || r.Error.Code != -32000 || r.Error.Message != reused {
		t.Fatalf("the approved call again: %+v %s, want -32000 %q", r.Error, r.Result, reused)
	}
	declined := answer(args, ask("gated", args), "decline")
	if r := approvalTaskCall(t, g.URL, alice, "tools/call", "gated", declined); r.Error == nil || r.Error.Code != -32000 || r.Error.Message != "approval: declined" {
		t.Fatalf("a declined call: %+v %s", r.Error, r.Result)
	}
	// Bob cannot spend alice's answer: the state names its caller.
	other := answer(args, ask("gated", args), "accept")
	if r := approvalTaskCall(t, g.URL, bob, "tools/call", "gated", other); r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "was not asked for this call") {
		t.Fatalf("bob with alice's answer: %+v %s", r.Error, r.Result)
	}

	own := map[string]any{"name": "asked", "arguments": map[string]any{}}
	r = approvalTaskCall(t, g.URL, alice, "tools/call", "asked", answer(own, ask("asked", own), "accept"))
	if h := r.detailed(t); h.ResultType != "task" || h.TaskID == "" {
		t.Fatalf("asked, approved: %s", r.Result)
	}
}

// TestTaskAfterApprovalLegacy: on 2025-11-25 the tools under approval are
// listed without execution.taskSupport (slow keeps its own), a task
// request of one is refused with -32601 saying why, and a call without
// one is the plain call, asked through elicitation (this client cannot
// be asked: the approval's own refusal), even for the task-only gated.
func TestTaskAfterApprovalLegacy(t *testing.T) {
	idp := newTestIdP(t)
	marker := fmt.Sprintf("task-approval-legacy-%d", time.Now().UnixNano())
	g := startGateway(t, approvalTasksCaddyfile(t, idp, marker))
	c := legacyClient(t, g.URL, bearer(idp.token(t, "alice", "", nil, time.Hour)))
	ctx := context.Background()
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if got, want := tool.Execution != nil, tool.Name == "slow"; got != want {
			t.Errorf("tool %s: execution %+v", tool.Name, tool.Execution)
		}
	}
	for i, name := range []string{"gated", "asked"} {
		r := callAsTask(t, c, int64(i+1), name, map[string]any{"seconds": 0.1}, map[string]any{})
		want := fmt.Sprintf("tool %q asks for approval: it runs as a task only on protocol version 2026-07-28 and later; call it without params.task", name)
		if r.Error == nil || r.Error.Code != -32601 || r.Error.Message != want {
			t.Errorf("%s as a task: %+v %s", name, r.Error, r.Result)
		}
	}
	_, err = c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "gated", Arguments: map[string]any{"seconds": 0.1}}})
	if err == nil || !strings.Contains(err.Error(), "needs approval through elicitation") {
		t.Errorf("gated, plainly: %v", err)
	}
}

// TestTaskAfterApprovalAcrossNodes: two nodes sharing session_key and a
// Redis (the cache's, which keeps both the tasks and the spent answers).
// The question asked on A and accepted there makes a task that B answers;
// the same accepted retry sent to B is refused as spent and makes none.
func TestTaskAfterApprovalAcrossNodes(t *testing.T) {
	marker := fmt.Sprintf("task-approval-nodes-%d", time.Now().UnixNano())
	cfg := fmt.Sprintf(`	mcp /mcp {
		session_key {env.EDGEMCP_SESSION_KEY}
		cache {
			redis %s
			key_prefix %s
		}
		connector main postgres %q
		tool gated {
			description "Asks first, then runs only as a task"
			use main
			statement "SELECT '%s' AS tag"
			approval required
			task required
		}
	}`, testservices.RedisURL(t), testservices.RedisPrefix(t), postgresURL(t), marker)
	a, b := startNode(t, "A", cfg), startNode(t, "B", cfg)
	args := map[string]any{"name": "gated", "arguments": map[string]any{}}
	r := approvalTaskCall(t, a.url, nil, "tools/call", "gated", args)
	var q approvalQuestion
	if r.Error != nil || json.Unmarshal(r.Result, &q) != nil || q.ResultType != "input_required" || q.RequestState == "" {
		t.Fatalf("the question: %+v %s", r.Error, r.Result)
	}
	retry := map[string]any{"name": "gated", "arguments": map[string]any{}, "requestState": q.RequestState,
		"inputResponses": map[string]any{approval.InputName: map[string]any{"action": "accept", "content": map[string]any{}}}}
	handle := approvalTaskCall(t, a.url, nil, "tools/call", "gated", retry).detailed(t)
	if handle.ResultType != "task" || handle.TaskID == "" {
		t.Fatalf("the approved call on A: %+v", handle)
	}
	const reused = "approval: the answer was already used for a call: call again without it to be asked again"
	if r := approvalTaskCall(t, b.url, nil, "tools/call", "gated", retry); r.Error == nil || r.Error.Code != -32000 || r.Error.Message != reused {
		t.Fatalf("the approved call again on B: %+v %s, want -32000 %q", r.Error, r.Result, reused)
	}
	var done detailed
	for deadline := time.Now().Add(10 * time.Second); done.Status != "completed"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still %+v after 10s", done)
		}
		done = approvalTaskCall(t, b.url, nil, "tasks/get", "", map[string]any{"taskId": handle.TaskID}).detailed(t)
	}
	if !strings.Contains(string(done.Result), marker) {
		t.Fatalf("the task's result on B: %s", done.Result)
	}
}
