package fastpath

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/tasks"
)

// 2025-11-25's tasks/list (docs/tasks.md, Tasks from upstream MCP servers)
// lists a caller's own upstream tasks: those of the caller's own session
// on each source that keeps one per caller and whose server lists tasks
// (TaskOptions.Listing), under the ids the other task methods take
// (tasks.Seal). A session every caller shares is not listed (its server
// cannot tell whose task is whose), nor are the gateway's own tasks (the
// store keeps no index per caller): without a source that lists, the
// method is not served (-32601), and the capability says so.

// listsUpstreamTasks reports whether some source lists a caller's tasks now.
func (s *Server) listsUpstreamTasks() bool {
	return s.opts.Tasks.Listing != nil && len(s.opts.Tasks.Listing()) > 0
}

// taskListCursor is where a tasks/list continues: the source and its
// upstream's own cursor; the client sees it as base64url of its JSON.
type taskListCursor struct {
	Source string `json:"s"`
	Cursor string `json:"c,omitempty"`
}

// listUpstreamTasks answers tasks/list with one upstream page: the sources
// are walked in order, each to its last page, and nextCursor says where the
// next page is.
func (s *Server) listUpstreamTasks(ctx context.Context, w http.ResponseWriter, r *http.Request, body []byte, rawID json.RawMessage) {
	var req struct {
		Params struct {
			Cursor string `json:"cursor"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &req)
	sources := s.opts.Tasks.Listing()
	at := taskListCursor{Source: sources[0]}
	if req.Params.Cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(req.Params.Cursor)
		if err != nil || json.Unmarshal(raw, &at) != nil || !slices.Contains(sources, at.Source) {
			writeMessage(w, r, errorMessage(rawID, &pipeline.TaskError{Code: codeInvalidParams, Message: "invalid cursor"}))
			return
		}
	}
	owner := s.opts.Tasks.Identity(ctx)
	out := struct {
		Tasks      []tasks.LegacyTask `json:"tasks"`
		NextCursor string             `json:"nextCursor,omitempty"`
	}{Tasks: []tasks.LegacyTask{}}
	if owner == nil {
		writeResult(w, r, rawID, out) // no verified caller has a session of its own
		return
	}
	uctx, fwd := s.opts.Tasks.Upstream(ctx, at.Source)
	if fwd == nil {
		writeMessage(w, r, errorMessage(rawID, &pipeline.TaskError{Code: codeInvalidParams, Message: "invalid cursor"}))
		return
	}
	page, next, err := fwd.ListTasks(uctx, at.Cursor)
	if err != nil {
		writeMessage(w, r, errorMessage(rawID, s.shownTaskError(ctx, err)))
		return
	}
	for _, t := range page {
		t.ID = tasks.Seal(s.opts.Tasks.SealKey, at.Source, t.ID, owner)
		out.Tasks = append(out.Tasks, tasks.Legacy(t))
	}
	following := taskListCursor{Source: at.Source, Cursor: next}
	if next == "" {
		following = taskListCursor{}
		if i := slices.Index(sources, at.Source); i+1 < len(sources) {
			following.Source = sources[i+1]
		}
	}
	if following.Source != "" {
		b, _ := json.Marshal(following)
		out.NextCursor = base64.RawURLEncoding.EncodeToString(b)
	}
	writeResult(w, r, rawID, out)
}

// TaskListHook declares tasks.list in 2025-11-25's tasks capability
// (after TaskHooks) while some source lists a caller's tasks.
func TaskListHook(hooks *server.Hooks, lists func() bool) {
	hooks.AddAfterInitialize(func(_ context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		if res.Capabilities.Tasks != nil && !mcp.IsModernProtocol(res.ProtocolVersion) && lists() {
			res.Capabilities.Tasks.List = &struct{}{}
		}
	})
}
