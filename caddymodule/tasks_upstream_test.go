package caddymodule

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestTaskUpstreamPassthrough: an upstream MCP server (mcp-go's) that runs
// a tool as a task is passed through: the gateway lists the tool with its
// task support, a task request is forwarded and answered with the
// upstream's task under a sealed id, and tasks/get, tasks/result and
// tasks/cancel with that id reach the upstream, on 2025-11-25 and (get,
// inline) on 2026-07-28; an id whose seal is broken, or the upstream's
// own id, is "task not found".
func TestTaskUpstreamPassthrough(t *testing.T) {
	release := make(chan struct{})
	url := taskUpstream(t, &release)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source up mcp %s/mcp {
			required
		}
	}
}`, url))
	c := legacyClient(t, g.URL, nil)
	ctx := context.Background()

	if caps := c.GetServerCapabilities().Tasks; caps == nil || caps.Requests == nil {
		t.Fatalf("tasks capability %+v", caps)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		want := map[string]mcp.TaskSupport{"up_research": mcp.TaskSupportOptional}[tool.Name]
		if got := tool.Execution; (got == nil) != (want == "") || (got != nil && got.TaskSupport != want) {
			t.Errorf("%s: execution %+v, want %q", tool.Name, got, want)
		}
	}

	task := created(t, callAsTask(t, c, 1, "up_research", map[string]any{"topic": "tides"}, map[string]any{}))
	if !strings.HasPrefix(task.TaskId, "u.") || task.Status != mcp.TaskStatusWorking {
		t.Fatalf("handle %+v: want a sealed id, working", task)
	}
	got, err := c.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: task.TaskId}})
	if err != nil || got.Status != mcp.TaskStatusWorking || got.TaskId != task.TaskId {
		t.Fatalf("tasks/get: %+v %v", got, err)
	}
	for _, bad := range []string{task.TaskId[:len(task.TaskId)-2] + "AA", "u.x.y.z.w"} {
		if _, err := c.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: bad}}); err == nil || !strings.Contains(err.Error(), "task not found") {
			t.Errorf("tasks/get %q: %v, want task not found", bad, err)
		}
	}
	close(release)
	res, err := c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: task.TaskId}})
	if err != nil || len(res.Content) != 1 || res.Content[0].(mcp.TextContent).Text != "researched tides" {
		t.Fatalf("tasks/result: %+v %v", res, err)
	}
	if related, _ := res.Meta.AdditionalFields[mcp.RelatedTaskMetaKey].(map[string]any); related["taskId"] != task.TaskId {
		t.Fatalf("tasks/result _meta %+v", res.Meta)
	}
	if done, err := c.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: task.TaskId}}); err != nil || done.Status != mcp.TaskStatusCompleted {
		t.Fatalf("tasks/get after the result: %+v %v", done, err)
	}

	// A plain call of the task tool and of the other tool stay plain.
	if res := callAsTask(t, c, 2, "up_plain", nil, nil); res.Error != nil || !strings.Contains(string(res.Result), `"plain"`) {
		t.Fatalf("a plain tool: %+v %s", res.Error, res.Result)
	}

	// Cancelled through the gateway: the upstream says cancelled.
	release = make(chan struct{})
	defer close(release)
	second := created(t, callAsTask(t, c, 3, "up_research", map[string]any{"topic": "waves"}, map[string]any{}))
	cancelled, err := c.CancelTask(ctx, mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: second.TaskId}})
	if err != nil || cancelled.Status != mcp.TaskStatusCancelled || cancelled.TaskId != second.TaskId {
		t.Fatalf("tasks/cancel: %+v %v", cancelled, err)
	}

	// 2026-07-28: the handle and the outcome inline.
	s := &rawSession{url: g.URL, version: "2026-07-28"}
	third := modernTaskRequest(t, s, 4, "tools/call", "up_research", map[string]any{"name": "up_research", "arguments": map[string]any{"topic": "reefs"}}, true).detailed(t)
	if third.ResultType != "task" || !strings.HasPrefix(third.TaskID, "u.") {
		t.Fatalf("2026-07-28 handle %+v", third)
	}
	// Two handlers wait now: the cancelled one (mcp-go does not stop it)
	// and this one.
	release <- struct{}{}
	release <- struct{}{}
	var done detailed
	for deadline := time.Now().Add(10 * time.Second); done.Status != "completed"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still %+v after 10s", done)
		}
		done = modernTaskRequest(t, s, 5, "tasks/get", "", map[string]any{"taskId": third.TaskID}, true).detailed(t)
	}
	if !strings.Contains(string(done.Result), "researched reefs") {
		t.Fatalf("inline result %s", done.Result)
	}
}

// taskUpstream is an mcp-go server that runs "research" as a task (its
// work waits for *release, or 20s) and "plain" plainly; its URL.
func taskUpstream(t *testing.T, release *chan struct{}) string {
	up := server.NewMCPServer("researcher", "1", server.WithTaskCapabilities(true, true, true))
	up.AddTool(mcp.NewTool("research", mcp.WithDescription("Researches for a while"), mcp.WithTaskSupport(mcp.TaskSupportOptional),
		mcp.WithString("topic", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// mcp-go ends a task's context when the request that made it
			// returns: the work waits on the test instead.
			select {
			case <-*release:
			case <-time.After(20 * time.Second):
			}
			return mcp.NewToolResultText("researched " + req.GetString("topic", "")), nil
		})
	return servePlainTool(t, up)
}

// servePlainTool adds "plain", a tool that answers at once, to up and
// serves it over streamable HTTP until the test ends; its URL.
func servePlainTool(t *testing.T, up *server.MCPServer) string {
	up.AddTool(mcp.NewTool("plain", mcp.WithDescription("Answers at once")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("plain"), nil
	})
	hs := httptest.NewServer(server.NewStreamableHTTPServer(up))
	t.Cleanup(hs.Close)
	return hs.URL
}

// jwtTaskGateway is a gateway behind idp's JWTs (default_auth) over the
// MCP server at url as source "up", with the source's session line
// ("": none, per_caller behind default_auth).
func jwtTaskGateway(t *testing.T, idp *testIdP, url, session string) *gateway {
	if session != "" {
		session = "session " + session
	}
	return startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		%s
		source up mcp %s/mcp {
			required
			%s
		}
	}
}`, jwtDefaultAuth(idp), url, session))
}

// TestTaskUpstreamOwnedByCaller: behind a JWT default_auth, the sealed id
// of alice's upstream task is, for bob, what a made-up id is, on get,
// result and cancel, although both callers share the source's upstream
// session; alice reads her result.
func TestTaskUpstreamOwnedByCaller(t *testing.T) {
	release := make(chan struct{})
	url := taskUpstream(t, &release)
	idp := newTestIdP(t)
	g := jwtTaskGateway(t, idp, url, "")
	alice := legacyClient(t, g.URL, bearer(idp.token(t, "alice", "", nil, time.Hour)))
	bob := legacyClient(t, g.URL, bearer(idp.token(t, "bob", "", nil, time.Hour)))
	ctx := context.Background()

	task := created(t, callAsTask(t, alice, 1, "up_research", map[string]any{"topic": "tides"}, map[string]any{}))
	answers := func(c *client.Client, id string) string {
		_, errGet := c.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: id}})
		_, errResult := c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: id}})
		_, errCancel := c.CancelTask(ctx, mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: id}})
		return fmt.Sprint(errGet, "|", errResult, "|", errCancel)
	}
	// Bob's own seal of the same upstream id is valid for him only: a
	// made-up id that names the same source and upstream task.
	want := answers(bob, "u.dXA..bm8tc3VjaC10YXNr.AAAAAAAAAAAAAAAAAAAAAA")
	if !strings.Contains(want, "task not found") {
		t.Fatalf("a made-up sealed id: %s", want)
	}
	if got := answers(bob, task.TaskId); got != want {
		t.Fatalf("bob on alice's upstream task: %s, want %s", got, want)
	}
	close(release)
	res, err := alice.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: task.TaskId}})
	if err != nil || res.Content[0].(mcp.TextContent).Text != "researched tides" {
		t.Fatalf("alice's result: %+v %v", res, err)
	}
}
