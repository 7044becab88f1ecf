package caddymodule

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestTaskUpstreamListPerCaller: behind a JWT default_auth, on an MCP
// source with a session per caller whose server lists tasks, 2025-11-25's
// tasks capability declares list and tasks/list answers each caller the
// tasks of its own upstream session, under the sealed ids the other task
// methods take; another caller's list holds none of them.
func TestTaskUpstreamListPerCaller(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	url := taskUpstream(t, &release)
	idp := newTestIdP(t)
	g := jwtTaskGateway(t, idp, url, "per_caller")
	alice := legacyClient(t, g.URL, bearer(idp.token(t, "alice", "", nil, time.Hour)))
	bob := legacyClient(t, g.URL, bearer(idp.token(t, "bob", "", nil, time.Hour)))
	ctx := context.Background()

	if caps := alice.GetServerCapabilities().Tasks; caps == nil || caps.List == nil || caps.Cancel == nil {
		t.Fatalf("tasks capability %+v: want list", caps)
	}
	first := created(t, callAsTask(t, alice, 1, "up_research", map[string]any{"topic": "tides"}, map[string]any{}))
	second := created(t, callAsTask(t, alice, 2, "up_research", map[string]any{"topic": "waves"}, map[string]any{}))
	listed := func(c *client.Client) []string {
		t.Helper()
		res, err := c.ListTasks(ctx, mcp.ListTasksRequest{})
		if err != nil {
			t.Fatalf("tasks/list: %v", err)
		}
		var ids []string
		for _, task := range res.Tasks {
			if task.Status != mcp.TaskStatusWorking {
				t.Errorf("listed %+v: want working", task)
			}
			ids = append(ids, task.TaskId)
		}
		return ids
	}
	got := listed(alice)
	if len(got) != 2 || !strings.Contains(strings.Join(got, " "), first.TaskId) || !strings.Contains(strings.Join(got, " "), second.TaskId) {
		t.Fatalf("alice's tasks/list %v, want %s and %s", got, first.TaskId, second.TaskId)
	}
	if got := listed(bob); len(got) != 0 {
		t.Fatalf("bob's tasks/list %v, want none", got)
	}
	if res, err := alice.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: got[0]}}); err != nil || res.TaskId != got[0] {
		t.Fatalf("tasks/get of a listed id: %+v %v", res, err)
	}
	if _, err := alice.ListTasks(ctx, mcp.ListTasksRequest{PaginatedRequest: mcp.PaginatedRequest{Params: mcp.PaginatedParams{Cursor: "bm90LWEtY3Vyc29y"}}}); err == nil {
		t.Fatal("tasks/list with a cursor the gateway did not make: no error")
	}
}

// TestTaskUpstreamListShared: on a session every caller shares, list is
// not declared and tasks/list is not served.
func TestTaskUpstreamListShared(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	url := taskUpstream(t, &release)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source up mcp %s/mcp {
			required
		}
	}
}`, url))
	c := legacyClient(t, g.URL, nil)
	if caps := c.GetServerCapabilities().Tasks; caps == nil || caps.Requests == nil || caps.List != nil {
		t.Fatalf("tasks capability %+v: want tools/call without list", caps)
	}
	created(t, callAsTask(t, c, 1, "up_research", map[string]any{"topic": "tides"}, map[string]any{}))
	if _, err := c.ListTasks(context.Background(), mcp.ListTasksRequest{}); err == nil || !strings.Contains(err.Error(), "not served") {
		t.Fatalf("tasks/list on a shared session: %v, want -32601", err)
	}
}
