package tasks

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/pipeline"
)

var wireTask = &pipeline.Task{ID: "abc", Status: pipeline.TaskWorking, Message: "busy",
	Created: time.Date(2026, 7, 28, 10, 30, 0, 250e6, time.UTC), Updated: time.Date(2026, 7, 28, 10, 31, 0, 0, time.UTC),
	TTL: time.Minute, PollInterval: 500 * time.Millisecond}

// TestLegacyWire: a task written for 2025-11-25 reads as mcp-go's Task (the
// Go SDK's own type of the version), and mcp-go's Task reads back as the
// same task; a task kept without limit has "ttl": null, as the version's
// schema requires the field.
func TestLegacyWire(t *testing.T) {
	b, err := json.Marshal(Legacy(wireTask))
	if err != nil {
		t.Fatal(err)
	}
	var theirs mcp.Task
	if err := json.Unmarshal(b, &theirs); err != nil {
		t.Fatal(err)
	}
	if theirs.TaskId != "abc" || theirs.Status != mcp.TaskStatusWorking || theirs.StatusMessage != "busy" ||
		theirs.CreatedAt != "2026-07-28T10:30:00.250Z" || *theirs.TTL != 60000 || *theirs.PollInterval != 500 {
		t.Fatalf("mcp-go reads %s as %+v", b, theirs)
	}
	back, err := json.Marshal(mcp.NewTask("abc", mcp.WithTaskTTL(60000), mcp.WithTaskPollInterval(500), mcp.WithTaskStatusMessage("busy"),
		mcp.WithTaskCreatedAt("2026-07-28T10:30:00.250Z")))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := ParseLegacy(back)
	if err != nil {
		t.Fatal(err)
	}
	if ours.ID != "abc" || ours.Status != pipeline.TaskWorking || !ours.Created.Equal(wireTask.Created) || ours.TTL != time.Minute || ours.PollInterval != 500*time.Millisecond {
		t.Fatalf("mcp-go's %s reads as %+v", back, ours)
	}
	unlimited := *wireTask
	unlimited.TTL = 0
	b, _ = json.Marshal(Legacy(&unlimited))
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(b, &fields)
	if string(fields["ttl"]) != "null" {
		t.Fatalf("ttl of a task without limit: %s", b)
	}
	if _, err := ParseLegacy(json.RawMessage(`{"status":"working"}`)); err == nil {
		t.Fatal("a task without an id was read")
	}
}

// TestLegacyResult: tasks/result is the call's result tagged with its
// task (an existing _meta kept); a failed task's is its error, a
// cancelled task has none.
func TestLegacyResult(t *testing.T) {
	done := *wireTask
	done.Status, done.Result = pipeline.TaskCompleted, json.RawMessage(`{"content":[],"_meta":{"a":1}}`)
	b, perr := LegacyResult(&done)
	if perr != nil {
		t.Fatal(perr)
	}
	res, err := mcp.ParseCallToolResult((*json.RawMessage)(&b))
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta.AdditionalFields[RelatedTaskKey].(map[string]any)["taskId"] != "abc" || res.Meta.AdditionalFields["a"] != float64(1) {
		t.Fatalf("result %s", b)
	}
	failed := *wireTask
	failed.Status, failed.Error = pipeline.TaskFailed, &pipeline.TaskError{Code: -32000, Message: "execution: failed"}
	if _, perr := LegacyResult(&failed); perr != failed.Error {
		t.Fatalf("failed task's result: %v", perr)
	}
	cancelled := *wireTask
	cancelled.Status = pipeline.TaskCancelled
	if _, perr := LegacyResult(&cancelled); perr == nil || perr.Code != pipeline.CodeInvalidParams {
		t.Fatalf("cancelled task's result: %v", perr)
	}
}

// TestDetailedWire: 2026-07-28 writes the task flat, in milliseconds
// named ttlMs and pollIntervalMs; a tools/call that made it answers
// resultType "task", tasks/get answers "complete" with the result of a
// completed task or the error of a failed one inline.
func TestDetailedWire(t *testing.T) {
	read := func(v any) map[string]any {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return m
	}
	c := read(Created(wireTask))
	if c["resultType"] != "task" || c["taskId"] != "abc" || c["ttlMs"] != float64(60000) || c["pollIntervalMs"] != float64(500) ||
		c["status"] != "working" || c["result"] != nil || c["ttl"] != nil {
		t.Fatalf("created %v", c)
	}
	done := *wireTask
	done.Status, done.Result = pipeline.TaskCompleted, json.RawMessage(`{"content":[{"type":"text","text":"ok"}],"isError":true}`)
	g := read(Detailed(&done))
	if g["resultType"] != "complete" || g["result"].(map[string]any)["isError"] != true || g["error"] != nil {
		t.Fatalf("completed %v", g)
	}
	failed := *wireTask
	failed.Status, failed.Error = pipeline.TaskFailed, &pipeline.TaskError{Code: -32000, Message: "execution: failed"}
	f := read(Detailed(&failed))
	if f["error"].(map[string]any)["code"] != float64(-32000) || f["result"] != nil {
		t.Fatalf("failed %v", f)
	}
}

// TestDetailedDropsRelatedTask: an upstream's tasks/result carries
// 2025-11-25's related-task _meta; inline in a 2026-07-28 tasks/get it is
// left out (the extension forbids it there), other _meta kept, and a
// result without it written as it came.
func TestDetailedDropsRelatedTask(t *testing.T) {
	done := *wireTask
	done.Status = pipeline.TaskCompleted
	for _, c := range []struct{ in, want string }{
		{`{"content":[],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"u1"}}}`, `{"content":[]}`},
		{`{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"u1"},"k":1},"content":[]}`, `{"_meta":{"k":1},"content":[]}`},
		{`{"content": [], "_meta": {"k": 1}}`, `{"content": [], "_meta": {"k": 1}}`},
	} {
		done.Result = json.RawMessage(c.in)
		if got := string(Detailed(&done).Result); got != c.want {
			t.Errorf("%s: inline %s, want %s", c.in, got, c.want)
		}
	}
}
