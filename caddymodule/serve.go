package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
	"github.com/edgemcp/edgemcp/caddymodule/session"
)

// ServeHTTP serves the MCP endpoint; it never calls next. It is a chain of
// guards, each of which may answer the request itself; what passes them
// all is answered by the fast path or relayed to mcp-go. A request at a
// toolset's path is served by the toolset's view (provisionToolsets),
// through this same chain.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if v := h.toolsetView(r); v != nil {
		return v.ServeHTTP(w, r, next) // a view has no views: this recurses once
	}
	if !h.admit(w, r) {
		return nil // Host or Origin refused: 403 (HostGate)
	}
	if err := h.inFlight.Enter(w, r); err != nil {
		return h.refused(w, err) // max_concurrent requests already being served: 503
	}
	defer h.inFlight.Leave(r)
	if h.catalog.ServeScript(w, r) {
		return nil // the catalog page's script: static, for anyone
	}
	if r = h.endpointAuth.Authenticate(w, r); r == nil {
		return nil // refused by default_auth (401), or the protected resource metadata was served
	}
	if err := h.allowRequest(w, r); err != nil {
		return h.refused(w, err) // over the endpoint's (or the toolset's) rate limit: 429
	}
	h.countToolset() // edgemcp_toolset_requests_total, at a toolset's path
	if h.catalog.Serve(w, r, false) {
		return nil // a browser's GET: the HTML tool catalog
	}
	if r = h.sessionIDs.Admit(w, r); r == nil {
		return nil // a session id not issued to this caller, or ended: 404
	}
	if h.sessions != nil {
		defer h.sessions.Track(w, r)() // max_sessions: the session is busy until the answer is written
	}
	defer h.trackSubscriber(r)() // a session with subscriptions is active while this runs
	if r.Method != http.MethodPost || r.Body == nil {
		h.fast.Relay(w, r, nil, h.sealedSession(r)) // a GET stream, a DELETE: mcp-go's
		return nil
	}
	body, err := fastpath.ReadBody(w, r, h.MaxBodySize)
	if err != nil {
		return h.refused(w, err) // larger than max_body_size (413), or unreadable (400)
	}
	if h.fast.AnswerList(w, r, body) {
		return nil // a plain tools/list, answered without mcp-go
	}
	call := h.fast.Inspect(body, r) // a tools/call, its tool set resolved once
	if h.fast.AnswerTask(w, r, body, call) {
		return nil // a call made a task, a task-only tool called plainly, or tasks/*: the gateway's tasks
	}
	if call == nil {
		call = h.inspectRead(body, r) // a request whose failure or upstream text the writer passes on
	}
	if call != nil {
		r = r.WithContext(fastpath.WithCall(r.Context(), call))
	} else if body = h.sessionIDs.OpenAnswer(w, r, body); body == nil {
		return nil // an answer to a request the gateway did not send in this session
	}
	if h.fast.Answer(w, r, call) {
		return nil // a plain tools/call, answered without mcp-go
	}
	h.fast.Relay(w, r, body, h.sealedSession(r)) // the rest: mcp-go, its answer rewritten
	return nil
}

// sealedSession is the session whose requests to the client get sealed
// ids (session.RequestIDs): the verified one of r, if any.
func (h *Handler) sealedSession(r *http.Request) string {
	if c := session.CheckOf(r); c != nil {
		return c.ID()
	}
	return ""
}
