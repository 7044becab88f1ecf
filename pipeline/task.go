package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Tasks (docs/tasks.md): a call that outlives the client's patience runs in
// the background and the client polls for it. The model is here, beside
// Tool and Result; the store, the runner and the wire shapes of both
// protocol versions are in pipeline/tasks.

// TaskSupport is how a tool runs as a task: 2025-11-25's
// execution.taskSupport, which a 2026-07-28 client without the tasks
// extension meets as "required" or not.
type TaskSupport string

const (
	TaskForbidden TaskSupport = ""         // never a task (the default)
	TaskOptional  TaskSupport = "optional" // a task when the client asks for one
	TaskRequired  TaskSupport = "required" // only ever a task
)

// TaskStatus is where a task is in its life.
type TaskStatus string

const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether the status is final: the task does not change
// again.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Task is one task as a client sees it.
type Task struct {
	ID      string
	Status  TaskStatus
	Message string // the statusMessage; "" for none
	Created time.Time
	Updated time.Time
	// TTL is how long after Created the task may be deleted; 0 for a
	// task without one (an upstream's that said null).
	TTL time.Duration
	// PollInterval is the pace the client is asked to poll at; 0 for
	// none said.
	PollInterval time.Duration
	// Result is the call's result as the client reads it (a complete
	// CallToolResult) once the task completed; a tool's isError result
	// completes a task too.
	Result json.RawMessage
	// Error is the JSON-RPC error the call ended with when the task
	// failed.
	Error *TaskError
}

// TaskError is the JSON-RPC error object of a failed task, as the client
// would have got it for the plain call.
type TaskError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// TaskErrorOf is err as the client reads it: a pipeline *Error keeps its
// code, its message as the wire shows it and its data; anything else says
// only that the execution failed (its text may hold what no caller may
// see).
func TaskErrorOf(err error) *TaskError {
	var pe *Error
	if errors.As(err, &pe) {
		return &TaskError{Code: pe.Code, Message: pe.Error(), Data: pe.Data}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &TaskError{Code: CodeStageFailed, Message: string(StageExecution) + ": timed out"}
	}
	return &TaskError{Code: CodeStageFailed, Message: string(StageExecution) + ": failed"}
}

// TaskRequest is a client's request that a call run as a task (the task
// params of a 2025-11-25 tools/call).
type TaskRequest struct {
	// TTL is the retention the client asked for; 0 when it asked none.
	TTL time.Duration
}

// TaskCapability is what an upstream says it does with tasks (its tasks
// capability).
type TaskCapability struct {
	ToolCalls bool // tools/call can run as a task
	List      bool // tasks/list of a caller's own tasks (TaskForwarder.ListTasks)
	Cancel    bool // tasks/cancel
}

// TaskForwarder is implemented by a source whose upstream runs tasks
// itself (an MCP server with the tasks capability). Such a source's tools
// say TaskPassthrough: their executor, given a Call with Task set, asks
// the upstream for a task and returns its handle as Result.Task. The ids a
// TaskForwarder takes and returns are the upstream's own; the gateway
// seals them before a client sees one (tasks.Seal), so that no client can
// name another source's or another caller's task.
//
// Every method goes to the upstream session that created the task: the
// source's shared session, or the session of the caller in ctx
// (RequestCaller) when the source keeps one per caller.
type TaskForwarder interface {
	// TaskCapability is the upstream's tasks capability; the zero value
	// while it has not been reached or when it runs no tasks.
	TaskCapability() TaskCapability
	// GetTask forwards tasks/get.
	GetTask(ctx context.Context, id string) (*Task, error)
	// TaskResult forwards tasks/result of a task that has ended: the
	// call's result, or the upstream's error as an *Error.
	TaskResult(ctx context.Context, id string) (json.RawMessage, error)
	// CancelTask forwards tasks/cancel and returns the task as it is
	// after.
	CancelTask(ctx context.Context, id string) (*Task, error)
	// ListTasks forwards tasks/list, one page from cursor. Only a
	// session that serves one caller lists: on a session every caller
	// shares, the upstream cannot tell whose task is whose, and the list
	// is empty.
	ListTasks(ctx context.Context, cursor string) (tasks []*Task, next string, err error)
}
