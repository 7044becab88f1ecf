package fastpath

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/tasks"
)

// An upstream's task (docs/tasks.md, Tasks from upstream MCP servers)
// reaches the client under a sealed id (tasks.Seal): the source's name and
// the upstream's id, bound to the caller who created it. A request about
// it goes to the source (pipeline.TaskForwarder), on the upstream session
// that created the task, with the upstream's id; the answer carries the
// sealed one. A seal another caller made, or none at all, is "not found".

// answerUpstreamTask answers tasks/get, tasks/result, tasks/cancel or
// tasks/update of the sealed id.
func (s *Server) answerUpstreamTask(ctx context.Context, w http.ResponseWriter, r *http.Request, rawID json.RawMessage, method, sealed string, who tasks.Who, isModern bool) {
	notFound := &pipeline.TaskError{Code: codeInvalidParams, Message: tasks.ErrNotFound.Error()}
	if who == nil || s.opts.Tasks.Upstream == nil {
		writeMessage(w, r, errorMessage(rawID, notFound))
		return
	}
	source, upID, err := tasks.Unseal(s.opts.Tasks.SealKey, sealed, who)
	var fwd pipeline.TaskForwarder
	if err == nil {
		ctx, fwd = s.opts.Tasks.Upstream(ctx, source)
	}
	if fwd == nil {
		writeMessage(w, r, errorMessage(rawID, notFound))
		return
	}
	upstreamFailed := func(err error) {
		writeMessage(w, r, errorMessage(rawID, s.shownTaskError(ctx, err)))
	}
	switch {
	case method == methodTasksGet:
		t, err := fwd.GetTask(ctx, upID)
		if err != nil {
			upstreamFailed(err)
			return
		}
		t.ID = sealed
		if !isModern {
			writeResult(w, r, rawID, tasks.Legacy(t))
			return
		}
		// The extension puts the outcome inline: an ended task's result
		// is read from the upstream's tasks/result.
		if t.Status == pipeline.TaskCompleted || t.Status == pipeline.TaskFailed {
			raw, err := fwd.TaskResult(ctx, upID)
			if err != nil {
				t.Status, t.Error = pipeline.TaskFailed, s.shownTaskError(ctx, err)
			} else {
				t.Result = raw
			}
		}
		writeResult(w, r, rawID, tasks.Detailed(t))
	case method == methodTasksResult && !isModern:
		raw, err := fwd.TaskResult(ctx, upID)
		if err != nil {
			upstreamFailed(err)
			return
		}
		out, terr := tasks.LegacyResult(&pipeline.Task{ID: sealed, Status: pipeline.TaskCompleted, Result: raw})
		if terr != nil {
			writeMessage(w, r, errorMessage(rawID, terr))
			return
		}
		writeMessage(w, r, jsonrpc.ResultMessage(rawID, out))
	case method == methodTasksCancel:
		t, err := fwd.CancelTask(ctx, upID)
		switch {
		case err != nil && isModern && upstreamEnded(ctx, fwd, upID):
			// 2025-11-25 refuses to cancel an ended task; the extension
			// acknowledges it (the outcome stands), as for a gateway task.
			writeResult(w, r, rawID, map[string]string{"resultType": tasks.ResultTypeComplete})
		case err != nil:
			upstreamFailed(err)
		case isModern:
			writeResult(w, r, rawID, map[string]string{"resultType": tasks.ResultTypeComplete})
		default:
			t.ID = sealed
			writeResult(w, r, rawID, tasks.Legacy(t))
		}
	case method == methodTasksUpdate && isModern:
		writeMessage(w, r, errorMessage(rawID, &pipeline.TaskError{Code: codeInvalidParams,
			Message: "an upstream's task waiting for input cannot be answered through the gateway yet"}))
	default:
		writeMessage(w, r, errorMessage(rawID, &pipeline.TaskError{Code: codeMethodNotFound, Message: "method \"" + method + "\" is not served"}))
	}
}

// upstreamEnded reports whether the upstream's task id has ended.
func upstreamEnded(ctx context.Context, fwd pipeline.TaskForwarder, id string) bool {
	t, err := fwd.GetTask(ctx, id)
	return err == nil && t.Status.Terminal()
}

// shownTaskError is an upstream's failure as the client sees it
// (error_detail).
func (s *Server) shownTaskError(ctx context.Context, err error) *pipeline.TaskError {
	e := pipeline.TaskErrorOf(err)
	if pe, ok := err.(*pipeline.Error); ok && !s.opts.FullErrorDetail {
		e = pipeline.TaskErrorOf(pe.WithoutServerText(s.shell.RequestID(ctx)))
	}
	return e
}
