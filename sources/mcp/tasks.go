package mcp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/tasks"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// The upstream's own tasks (docs/tasks.md, Tasks from upstream MCP
// servers). A server that declares the tasks capability for tools/call
// runs its tools marked execution.taskSupport as tasks: such a tool is
// published with that support and a call with a task request is
// forwarded with it, its answer the upstream's task handle. tasks/get,
// tasks/result, tasks/cancel and tasks/list go to the session that
// created the task: the shared one, or the caller's own (session
// per_caller). The ids are the upstream's; the gateway seals them
// (tasks.Seal) before a client sees one. Upstream sessions speak
// 2025-11-25 (WithLegacyProtocolOnly), whose tasks these are.

var _ pipeline.TaskForwarder = (*Source)(nil)

// taskCapability reads a server's tasks capability.
func taskCapability(c *mcp.TasksCapability) pipeline.TaskCapability {
	if c == nil {
		return pipeline.TaskCapability{}
	}
	return pipeline.TaskCapability{
		ToolCalls: c.Requests != nil && c.Requests.Tools != nil && c.Requests.Tools.Call != nil,
		List:      c.List != nil,
		Cancel:    c.Cancel != nil,
	}
}

// TaskCapability implements pipeline.TaskForwarder: the capability the
// shared session's server declared, with List only where ListTasks lists
// (a session per caller).
func (s *Source) TaskCapability() pipeline.TaskCapability {
	sess := s.conn.current()
	if sess == nil {
		return pipeline.TaskCapability{}
	}
	c := sess.tasks
	c.List = c.List && s.conn.callers != nil
	return c
}

// taskSupport is the tool's execution.taskSupport as its server listed it.
func (lt listedTool) taskSupport() pipeline.TaskSupport {
	var v struct {
		Execution struct {
			TaskSupport pipeline.TaskSupport `json:"taskSupport"`
		} `json:"execution"`
	}
	_ = json.Unmarshal(lt.raw, &v)
	switch v.Execution.TaskSupport {
	case pipeline.TaskOptional, pipeline.TaskRequired:
		return v.Execution.TaskSupport
	}
	return pipeline.TaskForbidden
}

// passTasks makes t run as the upstream's task when its server runs it so:
// a call with a task request (Call.Task, forwarded by call) answers the
// upstream's handle as Result.Task.
func (c *conn) passTasks(t *pipeline.Tool, lt listedTool) {
	support := lt.taskSupport()
	shared := c.current()
	if support == pipeline.TaskForbidden || shared == nil || !shared.tasks.ToolCalls {
		return
	}
	t.Tasks, t.TaskPassthrough = support, true
	plain := t.Executor
	t.Executor = pipeline.ExecutorFunc(func(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
		res, err := plain.Execute(ctx, call)
		if err != nil || call.Task == nil {
			return res, err
		}
		var created struct {
			Task json.RawMessage `json:"task"`
		}
		if json.Unmarshal(res.Native, &created) != nil || created.Task == nil {
			return res, nil // the server ran it as a plain call: its result stands
		}
		task, err := tasks.ParseLegacy(created.Task)
		if err != nil {
			return nil, upstream.Failed("the MCP server's answer to a task request holds no task", err)
		}
		return &pipeline.Result{Task: task, NoStore: true}, nil
	})
}

// taskParams is a task request as tools/call forwards it.
func taskParams(r *pipeline.TaskRequest) map[string]any {
	params := map[string]any{}
	if r.TTL > 0 {
		params["ttl"] = r.TTL.Milliseconds()
	}
	return params
}

// GetTask implements pipeline.TaskForwarder.
func (s *Source) GetTask(ctx context.Context, id string) (*pipeline.Task, error) {
	return s.conn.taskRequest(ctx, mcp.MethodTasksGet, id)
}

// CancelTask implements pipeline.TaskForwarder.
func (s *Source) CancelTask(ctx context.Context, id string) (*pipeline.Task, error) {
	return s.conn.taskRequest(ctx, mcp.MethodTasksCancel, id)
}

// TaskResult implements pipeline.TaskForwarder. Asked of a task that has
// not ended, the server waits for it, within the source's timeout.
func (s *Source) TaskResult(ctx context.Context, id string) (json.RawMessage, error) {
	return s.conn.forward(ctx, string(mcp.MethodTasksResult), map[string]any{"taskId": id})
}

// ListTasks implements pipeline.TaskForwarder: only a caller's own
// session lists.
func (s *Source) ListTasks(ctx context.Context, cursor string) ([]*pipeline.Task, string, error) {
	if s.conn.callers == nil {
		return nil, "", nil
	}
	params := map[string]any{}
	if cursor != "" {
		params["cursor"] = cursor
	}
	raw, err := s.conn.forward(ctx, string(mcp.MethodTasksList), params)
	if err != nil {
		return nil, "", err
	}
	var page struct {
		Tasks      []json.RawMessage `json:"tasks"`
		NextCursor string            `json:"nextCursor"`
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		return nil, "", upstream.Failed("the MCP server's tasks/list answer is not readable", err)
	}
	list := make([]*pipeline.Task, 0, len(page.Tasks))
	for _, t := range page.Tasks {
		task, err := tasks.ParseLegacy(t)
		if err != nil {
			return nil, "", upstream.Failed("the MCP server's tasks/list holds a task that is not readable", err)
		}
		list = append(list, task)
	}
	return list, page.NextCursor, nil
}

// taskRequest forwards tasks/get or tasks/cancel, whose answer is the task.
func (c *conn) taskRequest(ctx context.Context, method mcp.MCPMethod, id string) (*pipeline.Task, error) {
	if id == "" {
		return nil, errors.New("a task request without a task id")
	}
	raw, err := c.forward(ctx, string(method), map[string]any{"taskId": id})
	if err != nil {
		return nil, err
	}
	task, err := tasks.ParseLegacy(raw)
	if err != nil {
		return nil, upstream.Failed("the MCP server's "+string(method)+" answer holds no task", err)
	}
	return task, nil
}
