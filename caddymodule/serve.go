package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
)

// ServeHTTP serves the MCP endpoint; it never calls next. It is a chain of
// guards, each of which may answer the request itself; what passes them
// all is answered by the fast path or relayed to mcp-go.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	if !h.admit(w, r) {
		return nil // Host or Origin refused: 403 (HostGate)
	}
	if !h.inFlight.enter(w, r) {
		return nil // max_concurrent requests already being served: 503
	}
	defer h.inFlight.leave(r)
	if h.serveCatalogScript(w, r) {
		return nil // the catalog page's script: static, for anyone
	}
	if r = h.authenticateEndpoint(w, r); r == nil {
		return nil // refused by default_auth (401), or the protected resource metadata was served
	}
	if !h.allowEndpoint(w, r) {
		return nil // over the endpoint's rate limit: 429
	}
	if h.serveCatalog(w, r, false) {
		return nil // a browser's GET: the HTML tool catalog
	}
	if r = h.admitSession(w, r); r == nil {
		return nil // a session id not issued to this caller, or ended: 404
	}
	if h.sessions != nil {
		defer h.trackSession(w, r)() // max_sessions: the session is busy until the answer is written
	}
	defer h.trackSubscriber(r)() // a session with subscriptions is active while this runs
	if r.Method != http.MethodPost || r.Body == nil {
		h.fast.Relay(w, r, nil, h.sealedSession(r)) // a GET stream, a DELETE: mcp-go's
		return nil
	}
	body, ok := fastpath.ReadBody(w, r, h.MaxBodySize)
	if !ok {
		return nil // larger than max_body_size (413), or unreadable (400)
	}
	if h.fast.AnswerList(w, r, body) {
		return nil // a plain tools/list, answered without mcp-go
	}
	call := h.fast.Inspect(body, r) // a tools/call, its tool set resolved once
	if call == nil {
		call = h.inspectRead(body, r) // a request whose failure or upstream text the writer passes on
	}
	if call != nil {
		r = r.WithContext(fastpath.WithCall(r.Context(), call))
	} else if body = h.openAnswer(w, r, body); body == nil {
		return nil // an answer to a request the gateway did not send in this session
	}
	if h.fast.Answer(w, r, call) {
		return nil // a plain tools/call, answered without mcp-go
	}
	h.fast.Relay(w, r, body, h.sealedSession(r)) // the rest: mcp-go, its answer rewritten
	return nil
}

// sealedSession is the session whose requests to the client get sealed
// ids (serverRequestIDs): the verified one of r, if any.
func (h *Handler) sealedSession(r *http.Request) string {
	if c := sessionCheckOf(r); c != nil {
		return c.id
	}
	return ""
}
