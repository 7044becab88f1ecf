package caddymodule

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestTaskTwoNodes: two gateway nodes (real processes) keep their tasks in
// the cache's Redis. A task made on node A is read on node B, working and
// then completed with its result; a task whose node is killed while it
// runs is seen failed on the other node once its lease lapsed, never left
// working.
func TestTaskTwoNodes(t *testing.T) {
	marker := fmt.Sprintf("task-nodes-%d", time.Now().UnixNano())
	nodeCfg := fmt.Sprintf(`	mcp /mcp {
		session_key {env.EDGEMCP_SESSION_KEY}
		connector db postgres %q
		cache {
			redis %s
			key_prefix %s
		}
		tool slow {
			description "Sleeps, then says so"
			use db
			statement "SELECT '%s' AS tag, pg_sleep({{ inputs.seconds }}) IS NOT NULL AS slept"
			input seconds float required
			task optional
		}
	}`, postgresURL(t), testservices.RedisURL(t), testservices.Name("tasknodes")+":", marker)
	a, b := startNode(t, "A", nodeCfg), startNode(t, "B", nodeCfg)
	onA, onB := legacyClient(t, a.url, nil), legacyClient(t, b.url, nil)
	ctx := context.Background()
	get := func(id string) *mcp.GetTaskResult {
		t.Helper()
		got, err := onB.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: id}})
		if err != nil {
			t.Fatalf("tasks/get on node B: %v", err)
		}
		return got
	}

	task := created(t, callAsTask(t, onA, 1, "slow", map[string]any{"seconds": 1}, map[string]any{}))
	if got := get(task.TaskId); got.Status != mcp.TaskStatusWorking {
		t.Fatalf("node B reads node A's task as %s", got.Status)
	}
	res, err := onB.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: task.TaskId}})
	if err != nil || !strings.Contains(res.Content[0].(mcp.TextContent).Text, `"slept":true`) {
		t.Fatalf("node A's task's result on node B: %+v %v", res, err)
	}

	orphan := created(t, callAsTask(t, onA, 2, "slow", map[string]any{"seconds": 20}, map[string]any{}))
	if got := get(orphan.TaskId); got.Status != mcp.TaskStatusWorking {
		t.Fatalf("before the kill: %s", got.Status)
	}
	a.kill()
	// The lease lasts three renewals of 2s: the task fails within about 6s.
	deadline := time.Now().Add(15 * time.Second)
	got := get(orphan.TaskId)
	for ; got.Status == mcp.TaskStatusWorking; got = get(orphan.TaskId) {
		if time.Now().After(deadline) {
			t.Fatal("the task of the killed node is still working after 15s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got.Status != mcp.TaskStatusFailed || got.StatusMessage != "the gateway node running it stopped" {
		t.Fatalf("the task of the killed node: %s %q", got.Status, got.StatusMessage)
	}
	if _, err := onB.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: orphan.TaskId}}); err == nil ||
		!strings.Contains(err.Error(), "the gateway node running it stopped") {
		t.Fatalf("tasks/result of the failed task: %v", err)
	}
}
