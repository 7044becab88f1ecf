package tasks

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// The two protocol versions write a task differently (docs/tasks.md):
//   - 2025-11-25 (experimental tasks): a Task object with ttl and
//     pollInterval; a tools/call answers {"task": Task}; the result comes
//     from tasks/result, tagged with the related-task _meta.
//   - 2026-07-28 (the io.modelcontextprotocol/tasks extension): ttlMs and
//     pollIntervalMs; a tools/call answers the task flat with resultType
//     "task"; tasks/get carries the result or the error inline once the
//     task has ended, with resultType "complete".

// ExtensionID names the tasks extension of 2026-07-28 (its capability
// key under extensions, on both sides).
const ExtensionID = "io.modelcontextprotocol/tasks"

// RelatedTaskKey is the _meta key that ties a message to its task.
const RelatedTaskKey = "io.modelcontextprotocol/related-task"

// LegacyTask is a task as 2025-11-25 writes it (tasks/get, tasks/cancel,
// tasks/list, the task of a CreateTaskResult).
type LegacyTask struct {
	TaskID        string              `json:"taskId"`
	Status        pipeline.TaskStatus `json:"status"`
	StatusMessage string              `json:"statusMessage,omitempty"`
	CreatedAt     string              `json:"createdAt"`
	LastUpdatedAt string              `json:"lastUpdatedAt"`
	// TTL is null for a task kept without limit.
	TTL          *int64 `json:"ttl"`
	PollInterval *int64 `json:"pollInterval,omitempty"`
}

// Legacy is t as 2025-11-25 writes it.
func Legacy(t *pipeline.Task) LegacyTask {
	return LegacyTask{TaskID: t.ID, Status: t.Status, StatusMessage: t.Message, CreatedAt: stamp(t.Created),
		LastUpdatedAt: stamp(t.Updated), TTL: millis(t.TTL), PollInterval: millis(t.PollInterval)}
}

// LegacyCreated is 2025-11-25's answer to the tools/call that made t.
func LegacyCreated(t *pipeline.Task) any {
	return struct {
		Task LegacyTask `json:"task"`
	}{Legacy(t)}
}

// LegacyResult is 2025-11-25's tasks/result of an ended task: the call's
// result with the related-task _meta added, or the error of a failed (or
// cancelled) task, which tasks/result answers as a JSON-RPC error.
func LegacyResult(t *pipeline.Task) (json.RawMessage, *pipeline.TaskError) {
	switch {
	case t.Status == pipeline.TaskCompleted:
	case t.Error != nil:
		return nil, t.Error
	default:
		return nil, &pipeline.TaskError{Code: pipeline.CodeInvalidParams, Message: "the task was " + string(t.Status) + ": it has no result"}
	}
	var result map[string]json.RawMessage
	if err := json.Unmarshal(t.Result, &result); err != nil || result == nil {
		return nil, &pipeline.TaskError{Code: pipeline.CodeInternal, Message: "the task's result is not a JSON object"}
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := result["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		meta = map[string]json.RawMessage{}
	}
	related, _ := json.Marshal(map[string]string{"taskId": t.ID})
	meta[RelatedTaskKey] = related
	result["_meta"], _ = json.Marshal(meta)
	b, err := json.Marshal(result)
	if err != nil {
		return nil, &pipeline.TaskError{Code: pipeline.CodeInternal, Message: "the task's result cannot be written"}
	}
	return b, nil
}

// DetailedTask is a task as the 2026-07-28 extension writes it: with
// ResultType "complete" the answer of tasks/get, with "task" the answer
// of the tools/call that made it.
type DetailedTask struct {
	ResultType    string              `json:"resultType"`
	TaskID        string              `json:"taskId"`
	Status        pipeline.TaskStatus `json:"status"`
	StatusMessage string              `json:"statusMessage,omitempty"`
	CreatedAt     string              `json:"createdAt"`
	LastUpdatedAt string              `json:"lastUpdatedAt"`
	// TTLMs is null for a task kept without limit.
	TTLMs          *int64              `json:"ttlMs"`
	PollIntervalMs *int64              `json:"pollIntervalMs,omitempty"`
	Result         json.RawMessage     `json:"result,omitempty"`
	Error          *pipeline.TaskError `json:"error,omitempty"`
}

// Result types of the extension's answers.
const (
	ResultTypeTask     = "task"
	ResultTypeComplete = "complete"
)

// Detailed is t as tasks/get answers it on 2026-07-28: the result of a
// completed task, the error of a failed one, inline.
func Detailed(t *pipeline.Task) DetailedTask {
	d := created(t, ResultTypeComplete)
	switch t.Status {
	case pipeline.TaskCompleted:
		d.Result = withoutRelatedTask(t.Result)
	case pipeline.TaskFailed:
		d.Error = t.Error
	}
	return d
}

// withoutRelatedTask is result without 2025-11-25's related-task _meta,
// which an upstream's tasks/result carries and the extension forbids on
// the inline result (the task's id is beside it); result itself when it
// has none.
func withoutRelatedTask(result json.RawMessage) json.RawMessage {
	var r map[string]json.RawMessage
	var meta map[string]json.RawMessage
	if json.Unmarshal(result, &r) != nil || json.Unmarshal(r["_meta"], &meta) != nil || meta[RelatedTaskKey] == nil {
		return result
	}
	delete(meta, RelatedTaskKey)
	if len(meta) == 0 {
		delete(r, "_meta")
	} else {
		r["_meta"], _ = json.Marshal(meta)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return result
	}
	return b
}

// Created is 2026-07-28's answer to the tools/call that made t.
func Created(t *pipeline.Task) DetailedTask { return created(t, ResultTypeTask) }

func created(t *pipeline.Task, resultType string) DetailedTask {
	return DetailedTask{ResultType: resultType, TaskID: t.ID, Status: t.Status, StatusMessage: t.Message,
		CreatedAt: stamp(t.Created), LastUpdatedAt: stamp(t.Updated), TTLMs: millis(t.TTL),
		PollIntervalMs: millis(t.PollInterval)}
}

// ParseLegacy reads a 2025-11-25 Task object (an upstream's).
func ParseLegacy(raw json.RawMessage) (*pipeline.Task, error) {
	var w LegacyTask
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	if w.TaskID == "" || w.Status == "" {
		return nil, errors.New("a task without taskId or status")
	}
	t := &pipeline.Task{ID: w.TaskID, Status: w.Status, Message: w.StatusMessage}
	t.Created, _ = time.Parse(time.RFC3339, w.CreatedAt)
	t.Updated, _ = time.Parse(time.RFC3339, w.LastUpdatedAt)
	if w.TTL != nil {
		t.TTL = time.Duration(*w.TTL) * time.Millisecond
	}
	if w.PollInterval != nil {
		t.PollInterval = time.Duration(*w.PollInterval) * time.Millisecond
	}
	return t, nil
}

// stamp is an ISO 8601 time, UTC, to the millisecond.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// millis is d in milliseconds, nil for 0: a null ttl is "kept without
// limit", an absent poll interval "none said", which 0 stands for in
// pipeline.Task.
func millis(d time.Duration) *int64 {
	if d == 0 {
		return nil
	}
	ms := d.Milliseconds()
	return &ms
}
