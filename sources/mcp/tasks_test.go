package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/tasks"
)

// taskUpstream is mcp-go's own server with tasks enabled, over
// streamable HTTP on a loopback port: "slow" (taskSupport optional)
// answers when released, "must" (required) at once, "plain" runs no task.
//
// mcp-go v1.2.1 runs a task under the context of the request that made
// it, which HandleMessage cancels as it returns: a task handler that
// watches its context is cancelled as soon as its handle is written, on
// every transport. So "slow" waits for release alone, and a cancel can
// only be seen in the task's status.
type taskUpstream struct {
	url     string
	release chan struct{}
}

func startTaskUpstream(t *testing.T) *taskUpstream {
	t.Helper()
	u := &taskUpstream{release: make(chan struct{}, 8)}
	m := server.NewMCPServer("tasks", "1", server.WithToolCapabilities(true), server.WithTaskCapabilities(true, true, true))
	m.AddTool(mcp.NewTool("slow", mcp.WithTaskSupport(mcp.TaskSupportOptional)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-u.release
			return mcp.NewToolResultText("slow done"), nil
		})
	m.AddTool(mcp.NewTool("must", mcp.WithTaskSupport(mcp.TaskSupportRequired)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("must done"), nil
		})
	m.AddTool(mcp.NewTool("plain"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("plain done"), nil
	})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(m, server.WithStateful(true)))
	t.Cleanup(func() {
		close(u.release) // no handler left waiting
		srv.Close()
	})
	u.url = srv.URL
	return u
}

// toolsByName is the source's tools in namespace "up".
func toolsByName(t *testing.T, s *Source) map[string]*pipeline.Tool {
	t.Helper()
	list, err := s.Tools("up")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*pipeline.Tool{}
	for _, tl := range list {
		m[tl.Name] = tl
	}
	return m
}

// as is ctx with the caller id (for a per_caller source's sessions).
func as(id *pipeline.Identity) context.Context {
	return pipeline.WithRequestCaller(context.Background(), &pipeline.Call{Identity: id, Request: &pipeline.RequestInfo{Header: http.Header{}}})
}

// startTask calls tool with a task request as id, and returns the
// upstream's task.
func startTask(t *testing.T, tool *pipeline.Tool, id *pipeline.Identity, inputs map[string]any) *pipeline.Task {
	t.Helper()
	call := &pipeline.Call{Tool: tool, Inputs: inputs, Identity: id, Request: &pipeline.RequestInfo{Header: http.Header{}},
		Task: &pipeline.TaskRequest{TTL: time.Minute}}
	res, err := tool.Executor.Execute(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	if res.Task == nil || res.Task.ID == "" || res.Task.Status.Terminal() || !res.NoStore {
		t.Fatalf("the task request made %+v", res)
	}
	return res.Task
}

// awaitTask polls tasks/get until the task has ended.
func awaitTask(t *testing.T, ctx context.Context, s *Source, id string) *pipeline.Task {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		task, err := s.GetTask(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if task.Status.Terminal() {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still %s", id, task.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestUpstreamTasks: a server that runs tasks is seen to (its capability,
// each tool's support); a task request on its tool is forwarded and
// answers the upstream's handle; tasks/get, tasks/result and tasks/cancel
// reach the task on the shared session, an unknown id is the server's
// own error; a session every caller
// shares lists no task; a call without a task request stays a plain call.
func TestUpstreamTasks(t *testing.T) {
	up := startTaskUpstream(t)
	s := &Source{URL: up.url, Transport: TransportStreamable}
	provision(t, s)
	// The server lists tasks, but a shared session does not (List).
	if c := s.TaskCapability(); c != (pipeline.TaskCapability{ToolCalls: true, Cancel: true}) {
		t.Fatalf("capability %+v", c)
	}
	tools := toolsByName(t, s)
	for name, want := range map[string]pipeline.TaskSupport{"up_slow": pipeline.TaskOptional, "up_must": pipeline.TaskRequired, "up_plain": pipeline.TaskForbidden} {
		if tl := tools[name]; tl.Tasks != want || tl.TaskPassthrough != (want != pipeline.TaskForbidden) {
			t.Errorf("%s: tasks %q passthrough %v, want %q", name, tl.Tasks, tl.TaskPassthrough, want)
		}
	}
	ctx := context.Background()

	task := startTask(t, tools["up_slow"], nil, nil)
	if task.TTL != time.Minute {
		t.Errorf("ttl %v: the request's ttl was not forwarded", task.TTL)
	}
	if got, err := s.GetTask(ctx, task.ID); err != nil || got.Status != pipeline.TaskWorking {
		t.Fatalf("get: %+v %v", got, err)
	}
	up.release <- struct{}{}
	if done := awaitTask(t, ctx, s, task.ID); done.Status != pipeline.TaskCompleted {
		t.Fatalf("ended %+v", done)
	}
	raw, err := s.TaskResult(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := mcp.ParseCallToolResult(&raw)
	if err != nil || res.Content[0].(mcp.TextContent).Text != "slow done" {
		t.Fatalf("result %s %v", raw, err)
	}

	task = startTask(t, tools["up_slow"], nil, nil)
	got, err := s.CancelTask(ctx, task.ID)
	if err != nil || got.Status != pipeline.TaskCancelled {
		t.Fatalf("cancel: %+v %v", got, err)
	}
	if got, err := s.GetTask(ctx, task.ID); err != nil || got.Status != pipeline.TaskCancelled {
		t.Fatalf("after cancel: %+v %v", got, err)
	}

	var perr *pipeline.Error
	if _, err := s.GetTask(ctx, "no-such-task"); !errors.As(err, &perr) || !perr.Upstream || perr.Code != mcp.INVALID_PARAMS {
		t.Fatalf("unknown task: %v", err)
	}
	if list, next, err := s.ListTasks(ctx, ""); list != nil || next != "" || err != nil {
		t.Fatalf("the shared session listed %v %q %v", list, next, err)
	}
	done := startTask(t, tools["up_must"], nil, nil)
	if got := awaitTask(t, ctx, s, done.ID); got.Status != pipeline.TaskCompleted {
		t.Fatalf("required tool's task %+v", got)
	}

	up.release <- struct{}{} // the cancelled task's handler waits too
	up.release <- struct{}{}
	plain, err := tools["up_slow"].Executor.Execute(ctx, &pipeline.Call{Tool: tools["up_slow"], Inputs: map[string]any{}})
	if err != nil || plain.Task != nil || !strings.Contains(string(plain.Native), "slow done") {
		t.Fatalf("a plain call: %+v %v", plain, err)
	}
}

// TestUpstreamTasksPerCaller: with session per_caller a task lives on its
// creator's upstream session: tasks/get finds it there and not on another
// caller's, and each caller's tasks/list holds their own tasks only.
func TestUpstreamTasksPerCaller(t *testing.T) {
	up := startTaskUpstream(t)
	s := &Source{URL: up.url, Transport: TransportStreamable, Session: SessionPerCaller}
	provision(t, s)
	tools := toolsByName(t, s)
	alice := &pipeline.Identity{Provider: "sso", Subject: "alice"}
	bob := &pipeline.Identity{Provider: "sso", Subject: "bob"}

	task := startTask(t, tools["up_must"], alice, nil)
	if got := awaitTask(t, as(alice), s, task.ID); got.Status != pipeline.TaskCompleted {
		t.Fatalf("task %+v", got)
	}
	if _, err := s.GetTask(as(bob), task.ID); err == nil {
		t.Fatal("another caller's session found the task")
	}
	mine, _, err := s.ListTasks(as(alice), "")
	if err != nil || len(mine) != 1 || mine[0].ID != task.ID {
		t.Fatalf("alice's list %v %v", mine, err)
	}
	theirs, _, err := s.ListTasks(as(bob), "")
	if err != nil || len(theirs) != 0 {
		t.Fatalf("bob's list %v %v", theirs, err)
	}
}

// TestServerEverythingTask: the MCP project's server-everything, over
// stdio, runs simulate-research-query only as a task: the gateway sees
// that, forwards the task request, polls it to completion and reads its
// report; a second task is cancelled.
func TestServerEverythingTask(t *testing.T) {
	node, script := testservices.Everything(t)
	s := &Source{Transport: TransportStdio, Command: node, Args: []string{script}}
	provision(t, s)
	tool := toolsByName(t, s)["up_simulate-research-query"]
	if tool == nil || tool.Tasks != pipeline.TaskRequired || !tool.TaskPassthrough {
		t.Fatalf("simulate-research-query: %+v", tool)
	}
	ctx := context.Background()
	task := startTask(t, tool, nil, map[string]any{"topic": "tasks"})
	if done := awaitTask(t, ctx, s, task.ID); done.Status != pipeline.TaskCompleted {
		t.Fatalf("ended %+v", done)
	}
	raw, err := s.TaskResult(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Content []struct{ Text string } `json:"content"`
		Meta    map[string]any          `json:"_meta"`
	}
	if json.Unmarshal(raw, &res) != nil || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "tasks") {
		t.Fatalf("result %s", raw)
	}
	if related, _ := res.Meta[tasks.RelatedTaskKey].(map[string]any); related["taskId"] != task.ID {
		t.Fatalf("result not tied to its task: %s", raw)
	}

	second := startTask(t, tool, nil, map[string]any{"topic": "never"})
	got, err := s.CancelTask(ctx, second.ID)
	if err != nil || got.Status != pipeline.TaskCancelled {
		t.Fatalf("cancel: %+v %v", got, err)
	}
}
