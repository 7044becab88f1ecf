package fastpath

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/tasks"
)

// The gateway's tasks (docs/tasks.md) are answered here, never by mcp-go,
// whose tasks live in one node's memory and run under the request that
// made them: a tools/call that asks for a task (2025-11-25's params.task;
// a 2026-07-28 client that declares the tasks extension) of a tool that
// runs as one, a call without that of a tool that runs only as one, and
// the tasks/* methods. The call runs the stages before the execution
// first (pipeline.Engine.Prepare), so that what refuses a call refuses it
// before a task exists; the rest (Engine.Run and the response stage) runs
// in the background under the runner, with the call's telemetry.

// TaskOptions are the endpoint's tasks.
type TaskOptions struct {
	// Runner runs the tasks and answers for them, over the store the
	// endpoint's nodes share (or this node's memory).
	Runner *tasks.Runner
	// Caller verifies the caller of a request about a task with the auth
	// provider that verified its creator (tasks.Who).
	Caller func(ctx context.Context, info *pipeline.RequestInfo) tasks.Who
	// Identity is the caller the endpoint verified (default_auth), the
	// owner of a task of a tool without auth of its own; nil without.
	Identity func(ctx context.Context) *pipeline.Identity
	// SealKey seals the ids of upstreams' tasks (tasks.Seal): a key every
	// node of the endpoint holds.
	SealKey []byte
	// Upstream is the source named source when it forwards tasks, with
	// ctx carrying the caller whose upstream session it may use; nil
	// when there is no such source.
	Upstream func(ctx context.Context, source string) (context.Context, pipeline.TaskForwarder)
	// Listing are the names of the sources that list a caller's own
	// upstream tasks (TaskCapability.List), in a fixed order.
	Listing func() []string
	// Answers is ctx carrying a 2026-07-28 retry's inputResponses and
	// requestState for the approver (approval.WithAnswers), as mcp-go's
	// tool middleware carries them on a plain call; nil without approvals.
	Answers func(ctx context.Context, rt mcp.MultiRoundTripParams) context.Context
}

// TaskHooks advertise the gateway's tasks, each protocol version's way
// and only there: 2025-11-25's tasks capability in initialize (cancel and
// tools/call; gateway tasks are not listed, docs/tasks.md, Limits), the
// 2026-07-28 extension in server/discover. mcp-go's own options would put
// both in both answers, and its own tasks are never used: AnswerTask
// takes every request about a task before mcp-go sees it. Both are
// declared only while some tool runs as a task (some: a source's tools
// change).
func TaskHooks(hooks *server.Hooks, some func() bool) {
	hooks.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		if !some() {
			return
		}
		if mcp.IsModernProtocol(res.ProtocolVersion) {
			addTaskExtension(&res.Capabilities)
			return
		}
		res.Capabilities.Tasks = &mcp.TasksCapability{Cancel: &struct{}{},
			Requests: &mcp.TaskRequestsCapability{Tools: &struct {
				Call *struct{} `json:"call,omitempty"`
			}{Call: &struct{}{}}}}
	})
	hooks.AddAfterDiscover(func(_ context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
		if some() {
			addTaskExtension(&res.Capabilities)
		}
	})
}

func addTaskExtension(caps *mcp.ServerCapabilities) {
	exts := make(map[string]any, len(caps.Extensions)+1)
	maps.Copy(exts, caps.Extensions) // the snapshot's map may be shared
	exts[tasks.ExtensionID] = map[string]any{}
	caps.Extensions = exts
}

// The JSON-RPC codes of the tasks' answers.
const (
	codeMethodNotFound    = -32601
	codeInvalidParams     = -32602
	codeInternal          = -32603
	codeMissingCapability = -32021
	codeHeaderMismatch    = -32020
)

// AnswerTask serves body when it is the gateway's to answer as a task
// (c is its tools/call, nil for another method), and reports whether it
// did.
func (s *Server) AnswerTask(w http.ResponseWriter, r *http.Request, body []byte, c *Call) bool {
	if s.opts.Tasks == nil {
		return false
	}
	if c != nil {
		return s.callAsTask(w, r, c)
	}
	return s.answerTaskMethod(w, r, body)
}

// modern reports whether r speaks a protocol version without sessions
// (2026-07-28 and later), whose tasks are the extension's.
func modern(r *http.Request) bool {
	return mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
}

// standardHeaders reports whether a 2026-07-28 request's headers are
// what mcp-go checks before it serves one: a version it speaks, and
// Mcp-Method (and for a tools/call Mcp-Name) saying what the body says.
func (s *Server) standardHeaders(r *http.Request, method, name string) bool {
	version := r.Header.Get(mcp.HeaderProtocolVersion)
	if s.streamable == nil || !s.streamable.SupportsProtocolVersion(version) {
		return false
	}
	if !mcp.RequiresStandardHeaders(version) {
		return true
	}
	if r.Header.Get(mcp.HeaderMethod) != method {
		return false
	}
	if name == "" {
		return true
	}
	got, ok := mcp.DecodeHeaderValue(r.Header.Get(mcp.HeaderName))
	return ok && got == name
}

// declaresTasks reports whether a 2026-07-28 request's _meta declares the
// tasks extension among the client's capabilities: 2026-07-28 has no
// session, so each request says what its client does.
func declaresTasks(meta json.RawMessage) bool {
	var m struct {
		Caps *struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"io.modelcontextprotocol/clientCapabilities"`
	}
	if json.Unmarshal(meta, &m) != nil || m.Caps == nil {
		return false
	}
	_, ok := m.Caps.Extensions[tasks.ExtensionID]
	return ok
}

// missingTasksCapability is the -32021 error of a 2026-07-28 request that
// needs the tasks extension its client did not declare, naming it in
// data.requiredCapabilities as the protocol's error does.
func missingTasksCapability(msg string) *pipeline.TaskError {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{
		"extensions": map[string]any{tasks.ExtensionID: map[string]any{}}}})
	return &pipeline.TaskError{Code: codeMissingCapability, Message: msg, Data: data}
}

// asksTask reports whether c asks for a task: 2025-11-25's params.task,
// or a 2026-07-28 client's declaration of the tasks extension; ttl is
// what 2025-11-25's task.ttl asked for (0: none).
func asksTask(c *Call, isModern bool) (asked bool, ttl time.Duration) {
	if isModern {
		return declaresTasks(c.meta), 0
	}
	if len(c.task) == 0 || string(c.task) == "null" {
		return false, 0
	}
	var p struct {
		TTL *int64 `json:"ttl"`
	}
	if json.Unmarshal(c.task, &p) == nil && p.TTL != nil && *p.TTL > 0 {
		ttl = time.Duration(min(*p.TTL, int64(time.Duration(1<<62)/time.Millisecond))) * time.Millisecond
	}
	return true, ttl
}

// callAsTask answers c when its tool runs as a gateway task and the call
// is one (or must be one).
func (s *Server) callAsTask(w http.ResponseWriter, r *http.Request, c *Call) bool {
	if c.Failure() != nil || c.Registry == nil {
		return false // an unknown tool: answered as always
	}
	engine := c.Registry.Tools().Engine
	tool := engine.Lookup(c.Name)
	if tool == nil {
		return false
	}
	isModern := modern(r)
	if isModern && !s.standardHeaders(r, string(mcp.MethodToolsCall), c.Name) {
		return false // mcp-go refuses it, as any request whose headers disagree
	}
	asked, ttl := asksTask(c, isModern)
	support := tool.Tasks
	if tool.Approval != nil && !tool.TaskPassthrough && !isModern {
		// Before 2026-07-28 the approval is an elicitation on the call's
		// own stream, which only mcp-go holds, and it would have to be
		// answered before the handle: such a tool is listed and answered
		// as one that does not run as a task (jsonrpc.Tool).
		support = pipeline.TaskForbidden
		if asked {
			writeMessage(w, r, errorMessage(c.RawID, &pipeline.TaskError{Code: codeMethodNotFound,
				Message: fmt.Sprintf("tool %q asks for approval: it runs as a task only on protocol version 2026-07-28 and later; call it without params.task", c.Name)}))
			return true
		}
	}
	switch {
	case !asked && support == pipeline.TaskRequired && isModern:
		writeMessage(w, r, errorMessage(c.RawID, missingTasksCapability(
			fmt.Sprintf("tool %q runs only as a task: declare the %s extension", c.Name, tasks.ExtensionID))))
		return true
	case !asked && support == pipeline.TaskRequired:
		writeMessage(w, r, errorMessage(c.RawID, &pipeline.TaskError{Code: codeMethodNotFound,
			Message: fmt.Sprintf("tool %q runs only as a task: send params.task", c.Name)}))
		return true
	case !asked:
		return false
	case support == pipeline.TaskForbidden && isModern:
		return false // the server decides: a plain answer
	case support == pipeline.TaskForbidden:
		writeMessage(w, r, errorMessage(c.RawID, &pipeline.TaskError{Code: codeMethodNotFound,
			Message: fmt.Sprintf("tool %q does not run as a task", c.Name)}))
		return true
	case tool.TaskPassthrough:
		s.forwardTask(w, r, c, engine, tool, ttl, isModern)
		return true
	}
	s.startTask(w, r, c, engine, tool, ttl, isModern)
	return true
}

// prepare runs the stages of c before the execution under its telemetry;
// a nil call means the answer is written. On 2026-07-28 the approval is
// one of them: a call without its answer is answered the question
// (input_required, no task yet), and the retry that carries it, checked
// and spent by the approver, goes on to be a task.
func (s *Server) prepare(w http.ResponseWriter, r *http.Request, c *Call, engine *pipeline.Engine, tool *pipeline.Tool) (context.Context, Record, *pipeline.Call) {
	ctx := WithCall(r.Context(), c)
	info := RequestInfo(ctx, c)
	args := c.Args
	if args == nil {
		args = map[string]any{}
	}
	if tool.Approval != nil {
		var msg string
		if ctx, msg = s.approvalContext(ctx, r, c); msg != "" {
			writeMessage(w, r, errorMessage(c.RawID, &pipeline.TaskError{Code: codeInvalidParams, Message: msg}))
			return ctx, nil, nil
		}
	}
	ctx, rec := s.shell.StartCall(ctx, c.Registry, tool.Name)
	call, ask, perr := engine.Prepare(ctx, c.Name, args, info)
	if call == nil && perr == nil {
		// The approver's question, answered as the plain call would be.
		out, perr := respond(ctx, rec, ask, protocolVersion(ctx, c))
		rec.Finish(ctx, perr)
		if perr != nil {
			s.writeFailure(ctx, w, r, c.RawID, perr)
			return ctx, rec, nil
		}
		if modern(r) {
			jsonrpc.DecorateSessionless(out, &s.opts.ServerInfo)
		}
		writeResult(w, r, c.RawID, out)
		return ctx, rec, nil
	}
	if perr != nil {
		rec.Finish(ctx, perr)
		s.writeFailure(ctx, w, r, c.RawID, perr)
		return ctx, rec, nil
	}
	return ctx, rec, call
}

// approvalContext is ctx with what the approver reads of a 2026-07-28
// call, as mcp-go gives it to a plain one: the request's protocol
// information (its _meta, read by mcp-go's own accessors) and the retry's
// answers and state; msg says what is malformed, as mcp-go's -32602 would.
func (s *Server) approvalContext(ctx context.Context, r *http.Request, c *Call) (_ context.Context, msg string) {
	if !modern(r) {
		return ctx, ""
	}
	var meta mcp.Meta
	if json.Unmarshal(c.meta, &meta) != nil || meta.ClientCapabilities() == nil {
		return ctx, "missing or invalid _meta field " + mcp.MetaKeyClientCapabilities
	}
	ctx = server.WithRequestProtocolInfo(ctx, &server.RequestProtocolInfo{Modern: true, ProtocolVersion: meta.ProtocolVersion(),
		ClientInfo: meta.ClientInfo(), ClientCapabilities: meta.ClientCapabilities(), LogLevel: meta.LogLevel()})
	var rt mcp.MultiRoundTripParams
	if len(c.answers) > 0 && json.Unmarshal(c.answers, &rt.InputResponses) != nil {
		return ctx, "invalid inputResponses"
	}
	if len(c.state) > 0 && json.Unmarshal(c.state, &rt.RequestState) != nil {
		return ctx, "invalid requestState"
	}
	if s.opts.Tasks.Answers != nil && (len(rt.InputResponses) > 0 || rt.RequestState != "") {
		ctx = s.opts.Tasks.Answers(ctx, rt)
	}
	return ctx, ""
}

// owner is the caller a task of call belongs to.
func (s *Server) owner(ctx context.Context, call *pipeline.Call) *pipeline.Identity {
	if call.Identity == nil && s.opts.Tasks.Identity != nil {
		return s.opts.Tasks.Identity(ctx)
	}
	return call.Identity
}

// forwardTask runs c on its upstream with the task request: the answer is
// the upstream's task under a sealed id, or, when the upstream ran the
// call plainly after all, its result.
func (s *Server) forwardTask(w http.ResponseWriter, r *http.Request, c *Call, engine *pipeline.Engine, tool *pipeline.Tool, ttl time.Duration, isModern bool) {
	ctx, rec, call := s.prepare(w, r, c, engine, tool)
	if call == nil {
		return
	}
	call.Task = &pipeline.TaskRequest{TTL: ttl}
	res, perr := engine.Run(ctx, call)
	var out *mcp.CallToolResult
	if perr == nil && res.Task == nil {
		out, perr = respond(ctx, rec, res, call.Request.ProtocolVersion)
	}
	rec.Finish(ctx, perr)
	switch {
	case perr != nil:
		s.writeFailure(ctx, w, r, c.RawID, perr)
	case out != nil:
		if isModern {
			jsonrpc.DecorateSessionless(out, &s.opts.ServerInfo)
		}
		writeResult(w, r, c.RawID, out)
	default:
		t := *res.Task
		t.ID = tasks.Seal(s.opts.Tasks.SealKey, tool.Source, t.ID, s.owner(ctx, call))
		if isModern {
			writeResult(w, r, c.RawID, tasks.Created(&t))
		} else {
			writeResult(w, r, c.RawID, tasks.LegacyCreated(&t))
		}
	}
}

// startTask runs the stages before the execution, makes the task, answers
// its handle and leaves the rest of the call to the runner.
func (s *Server) startTask(w http.ResponseWriter, r *http.Request, c *Call, engine *pipeline.Engine, tool *pipeline.Tool, ttl time.Duration, isModern bool) {
	ctx, rec, call := s.prepare(w, r, c, engine, tool)
	if call == nil {
		return
	}
	version := call.Request.ProtocolVersion
	t, err := s.opts.Tasks.Runner.Start(ctx, tasks.Spec{Tool: tool.Name, Identity: s.owner(ctx, call), TTL: tool.TaskTTL, Requested: ttl},
		func(wctx context.Context) (json.RawMessage, error) {
			res, perr := engine.Run(wctx, call)
			var out *mcp.CallToolResult
			if perr == nil {
				out, perr = respond(wctx, rec, res, version)
			}
			rec.Finish(wctx, perr)
			if perr != nil {
				if out, perr = s.shown(wctx, perr); perr != nil {
					return nil, perr
				}
			}
			return json.Marshal(out)
		})
	if err != nil {
		perr := pipeline.Fail(pipeline.StageExecution, err, "the task could not be made")
		rec.Finish(ctx, perr)
		s.writeFailure(ctx, w, r, c.RawID, perr)
		return
	}
	var answer any = tasks.LegacyCreated(t)
	if isModern {
		answer = tasks.Created(t)
	}
	writeResult(w, r, c.RawID, answer)
}

// taskRequest is a tasks/* request.
type taskRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		TaskID string          `json:"taskId"`
		Meta   json.RawMessage `json:"_meta"`
	} `json:"params"`
}

// The methods of tasks: 2025-11-25's four and the extension's update.
const (
	methodTasksGet    = "tasks/get"
	methodTasksResult = "tasks/result"
	methodTasksCancel = "tasks/cancel"
	methodTasksList   = "tasks/list"
	methodTasksUpdate = "tasks/update"
)

// answerTaskMethod answers a tasks/* request.
func (s *Server) answerTaskMethod(w http.ResponseWriter, r *http.Request, body []byte) bool {
	var req taskRequest
	if json.Unmarshal(body, &req) != nil || len(req.ID) == 0 || req.JSONRPC != "2.0" {
		return false
	}
	isModern := modern(r)
	if isModern && !s.standardHeaders(r, req.Method, "") {
		return false // mcp-go refuses it, as any request whose headers disagree
	}
	if isModern && s.refuseTaskMethod(w, r, &req) {
		return true
	}
	ctx := r.Context()
	info := RequestInfo(ctx, &Call{Header: r.Header, RemoteAddr: r.RemoteAddr, TLS: r.TLS})
	var who tasks.Who
	if s.opts.Tasks.Caller != nil {
		who = s.opts.Tasks.Caller(ctx, info)
	}
	runner, id := s.opts.Tasks.Runner, req.Params.TaskID
	fail := func(code int, msg string) {
		writeMessage(w, r, errorMessage(req.ID, &pipeline.TaskError{Code: code, Message: msg}))
	}
	if tasks.IsSealed(id) {
		switch req.Method {
		case methodTasksGet, methodTasksResult, methodTasksCancel, methodTasksUpdate:
			s.answerUpstreamTask(ctx, w, r, req.ID, req.Method, id, who, isModern)
			return true
		}
	}
	switch {
	case req.Method == methodTasksGet:
		t, err := runner.Get(ctx, id, who)
		if err != nil {
			s.writeTaskError(w, r, req.ID, err)
			return true
		}
		if isModern {
			writeResult(w, r, req.ID, tasks.Detailed(t))
		} else {
			writeResult(w, r, req.ID, tasks.Legacy(t))
		}
	case req.Method == methodTasksResult && !isModern:
		t, err := runner.Await(ctx, id, who)
		if err != nil {
			s.writeTaskError(w, r, req.ID, err)
			return true
		}
		raw, terr := tasks.LegacyResult(t)
		if terr != nil {
			writeMessage(w, r, errorMessage(req.ID, terr))
			return true
		}
		writeMessage(w, r, jsonrpc.ResultMessage(req.ID, raw))
	case req.Method == methodTasksCancel:
		t, err := runner.Cancel(ctx, id, who)
		switch {
		case isModern && (err == nil || errors.Is(err, tasks.ErrTerminal)):
			// The extension's cancel is an acknowledgement, eventually
			// consistent; a task that had ended keeps its outcome.
			writeResult(w, r, req.ID, map[string]string{"resultType": tasks.ResultTypeComplete})
		case errors.Is(err, tasks.ErrTerminal):
			fail(codeInvalidParams, fmt.Sprintf("the task has already ended (%s): it cannot be cancelled", t.Status))
		case err != nil:
			s.writeTaskError(w, r, req.ID, err)
		default:
			writeResult(w, r, req.ID, tasks.Legacy(t))
		}
	case req.Method == methodTasksUpdate && isModern:
		// A gateway task never waits for input: its approval is asked
		// before it is made.
		if _, err := runner.Get(ctx, id, who); err != nil {
			s.writeTaskError(w, r, req.ID, err)
			return true
		}
		fail(codeInvalidParams, "the task is not waiting for input")
	case req.Method == methodTasksList && !isModern && s.listsUpstreamTasks():
		s.listUpstreamTasks(ctx, w, r, body, req.ID)
	case req.Method == methodTasksList, req.Method == methodTasksResult, req.Method == methodTasksUpdate:
		// Gateway tasks are not listed: the store keeps no index per
		// caller (docs/tasks.md, Limits). 2026-07-28 has neither
		// tasks/list nor tasks/result; 2025-11-25 has no tasks/update.
		fail(codeMethodNotFound, fmt.Sprintf("method %q is not served", req.Method))
	default:
		return false
	}
	return true
}

// refuseTaskMethod answers a 2026-07-28 tasks/get, tasks/update or
// tasks/cancel that the extension refuses before looking at the task, and
// reports whether it did: an Mcp-Name header other than the task's id
// (-32020, as mcp-go answers any header that disagrees with the body),
// and a client that did not declare the extension (-32021). A missing
// Mcp-Name is let through: SEP-2663 asks clients for it, but mcp-go's
// client does not send it on these methods.
func (s *Server) refuseTaskMethod(w http.ResponseWriter, r *http.Request, req *taskRequest) bool {
	switch req.Method {
	case methodTasksGet, methodTasksUpdate, methodTasksCancel:
	default:
		return false // the removed methods are answered -32601 whoever asks
	}
	if h := r.Header.Get(mcp.HeaderName); h != "" {
		if got, ok := mcp.DecodeHeaderValue(h); !ok || got != req.Params.TaskID {
			writeMessageStatus(w, r, http.StatusBadRequest, errorMessage(req.ID, &pipeline.TaskError{Code: codeHeaderMismatch,
				Message: fmt.Sprintf("header %s does not match params.taskId", mcp.HeaderName)}))
			return true
		}
	}
	if !declaresTasks(req.Params.Meta) {
		writeMessage(w, r, errorMessage(req.ID, missingTasksCapability(
			fmt.Sprintf("%s needs the %s extension: declare it in the request's client capabilities", req.Method, tasks.ExtensionID))))
		return true
	}
	return false
}

// writeTaskError answers a runner's error: a task that does not exist,
// expired or is another caller's is "not found", alike; anything else is
// the store failing, whose text is not the client's to see.
func (s *Server) writeTaskError(w http.ResponseWriter, r *http.Request, id json.RawMessage, err error) {
	e := &pipeline.TaskError{Code: codeInvalidParams, Message: tasks.ErrNotFound.Error()}
	if !errors.Is(err, tasks.ErrNotFound) {
		e = &pipeline.TaskError{Code: codeInternal, Message: "the task store is unavailable"}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			e.Message = "the request ended before the task did"
		}
	}
	writeMessage(w, r, errorMessage(id, e))
}

// writeFailure answers a call's failure as the plain call would have been
// answered (error_detail, error_mode).
func (s *Server) writeFailure(ctx context.Context, w http.ResponseWriter, r *http.Request, id json.RawMessage, perr *pipeline.Error) {
	out, perr := s.shown(ctx, perr)
	if perr != nil {
		writeMessage(w, r, jsonrpc.ErrorMessage(id, perr))
		return
	}
	writeResult(w, r, id, out)
}

// writeResult answers result to the request id.
func writeResult(w http.ResponseWriter, r *http.Request, id json.RawMessage, result any) {
	b, err := json.Marshal(result)
	if err != nil {
		writeMessage(w, r, errorMessage(id, &pipeline.TaskError{Code: codeInternal, Message: "the answer cannot be written"}))
		return
	}
	writeMessage(w, r, jsonrpc.ResultMessage(id, b))
}

// errorMessage is the JSON-RPC response carrying e.
func errorMessage(id json.RawMessage, e *pipeline.TaskError) []byte {
	msg, _ := json.Marshal(struct {
		JSONRPC string              `json:"jsonrpc"`
		ID      json.RawMessage     `json:"id"`
		Error   *pipeline.TaskError `json:"error"`
	}{"2.0", id, e})
	return append(msg, '\n')
}

// writeMessage writes msg as JSON, or as one event to a client that reads
// only event streams.
func writeMessage(w http.ResponseWriter, r *http.Request, msg []byte) {
	writeMessageStatus(w, r, http.StatusOK, msg)
}

// writeMessageStatus writes msg as writeMessage does, with status (400
// for a header that disagrees with the body, as SEP-2243 and mcp-go
// answer it).
func writeMessageStatus(w http.ResponseWriter, r *http.Request, status int, msg []byte) {
	if !acceptsJSON(r) && acceptsEventStream(r) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(status)
		out := append(append([]byte("event: message\ndata: "), msg[:len(msg)-1]...), "\n\n"...)
		_, _ = w.Write(out)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(msg)
}
