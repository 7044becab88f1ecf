package caddymodule

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/pipeline"
)

// This file is the one place where edgemcp's error codes meet mcp-go.
//
// mcp-go answers an unknown tool with -32602 and turns any error returned by
// a tool handler into -32603; no hook changes a code. edgemcp answers -32601
// and -32000 (docs/architecture.md, Errors). So the handler reads the (bounded) POST body itself, notes the
// JSON-RPC id and tool name of a tools/call in the request context, and hands
// mcp-go a response writer that rewrites the error of exactly that id with
// the code and message the pipeline decided. A POST carries one JSON-RPC
// message; a JSON response arrives in one Write, and so does each SSE event.

// callState is what the HTTP layer knows about one tools/call.
type callState struct {
	id     any             // the JSON-RPC id, decoded
	rawID  json.RawMessage // as sent, for a direct answer
	direct bool            // plain enough to be answered without mcp-go
	modern string          // the protocol version of a direct call without a session (direct_modern.go)
	// overrides: a failure replaces even a result (resources/subscribe,
	// whose mcp-go handler always succeeds: relay.Relay refuses in a hook).
	overrides  bool
	name       string
	args       map[string]any
	header     http.Header
	remoteAddr string
	tls        *tls.ConnectionState

	// What passes on a source's own text (passthrough.go): the entries of
	// a list, and (under mu) the upstream's result of a forwarded request.
	list     *listEntries
	upstream json.RawMessage

	mu  sync.Mutex
	err *pipeline.Error
}

func (s *callState) fail(e *pipeline.Error) {
	s.mu.Lock()
	s.err = e
	s.mu.Unlock()
}

func (s *callState) failure() *pipeline.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

type callStateKey struct{}

func callStateFrom(ctx context.Context) *callState {
	st, _ := ctx.Value(callStateKey{}).(*callState)
	return st
}

// serveMCP bounds the body, notes a tools/call, and lets mcp-go's
// streamable HTTP transport do the rest.
func (h *Handler) serveMCP(w http.ResponseWriter, r *http.Request) {
	if !h.admit(w, r) {
		return // Host or Origin refused (gate.go)
	}
	if !h.inFlight.enter(w, r) {
		return // max_concurrent requests already being served: 503 (inflight.go)
	}
	defer h.inFlight.leave(r)
	if h.serveCatalogScript(w, r) {
		return // the catalog page's script: static, for anyone (catalog.go)
	}
	if r = h.authenticateEndpoint(w, r); r == nil {
		return // refused, or the metadata document was served (auth_http.go)
	}
	if !h.allowEndpoint(w, r) {
		return // over the endpoint's rate limit: 429 (ratelimit.go)
	}
	if h.serveCatalog(w, r, false) {
		return
	}
	if r = h.admitSession(w, r); r == nil {
		return // a session id not issued to this caller, or ended: 404 (sessionid.go)
	}
	if h.sessions != nil {
		defer h.trackSession(w, r)()
	}
	defer h.trackSubscriber(r)() // a session with subscriptions is active (relay.Relay.Busy)
	mw := &mcpWriter{inner: w}
	if c := sessionCheckOf(r); c != nil {
		mw.requestIDs, mw.session = serverRequestIDs{h.sessionIDs.keys}, c.id // requestids.go
	}
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.MaxBodySize))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeJSONRPCError(w, http.StatusRequestEntityTooLarge, -32600, fmt.Sprintf("request body larger than %d bytes", h.MaxBodySize))
				return
			}
			writeJSONRPCError(w, http.StatusBadRequest, -32700, "cannot read request body")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if h.answerListDirectly(w, r, body) {
			return
		}
		if st := h.inspectCall(body, r); st != nil {
			r = r.WithContext(context.WithValue(r.Context(), callStateKey{}, st))
			if h.answerDirectly(w, r, st) {
				return
			}
			mw.st = st
		} else if st := h.inspectRead(body, r); st != nil {
			r = r.WithContext(context.WithValue(r.Context(), callStateKey{}, st))
			mw.st = st
		} else if body = h.openAnswer(w, r, body); body == nil {
			return // an answer to a request the gateway did not send in this session (requestids.go)
		} else {
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
	}
	h.streamable.ServeHTTP(mw, r)
}

// inspectCall decodes a tools/call message; nil for anything else. An
// unknown tool is marked failed at once: mcp-go will answer it with -32602,
// which the writer turns into -32601.
func (h *Handler) inspectCall(body []byte, r *http.Request) *callState {
	var msg callMessage[map[string]any]
	argsOK := decodeCall(body, &msg) // one pass when the arguments are an object, as they are for nearly every call
	if !argsOK {
		var raw callMessage[json.RawMessage]
		if json.Unmarshal(body, &raw) != nil {
			return nil
		}
		msg.JSONRPC, msg.ID, msg.Method, msg.Params.Name, msg.Params.Meta = raw.JSONRPC, raw.ID, raw.Method, raw.Params.Name, raw.Params.Meta
		msg.Params.InputResponses, msg.Params.RequestState, msg.Params.Task = raw.Params.InputResponses, raw.Params.RequestState, raw.Params.Task
		argsOK = len(raw.Params.Arguments) == 0 || string(raw.Params.Arguments) == "null"
	}
	if msg.Method != "tools/call" || len(msg.ID) == 0 {
		return nil
	}
	st := &callState{name: msg.Params.Name, header: r.Header, remoteAddr: r.RemoteAddr, tls: r.TLS, rawID: msg.ID, args: msg.Params.Arguments}
	st.id = decodeID(msg.ID)
	_, idIsString := st.id.(string)
	_, idIsNumber := st.id.(float64)
	// _meta (progress tokens, trace context; on 2026-07-28 anything beyond
	// the protocol's own fields) and anything unusual are left to mcp-go.
	st.direct = msg.JSONRPC == "2.0" && (idIsString || idIsNumber) && argsOK && msg.Params.plain()
	if st.direct && len(msg.Params.Meta) > 0 {
		// Only a modern request's own fields (direct_modern.go).
		st.modern = h.modernVersion(msg.Params.Meta, r, st.name)
		st.direct = st.modern != ""
	}
	if reg := h.tools(); reg.engine.Lookup(st.name) == nil && !reg.search.IsMeta(st.name) {
		st.fail(&pipeline.Error{Code: pipeline.CodeToolNotFound, Stage: pipeline.StageResolution,
			Message: fmt.Sprintf("tool %q not found", st.name)})
		h.recordUnknownTool(r.Context(), st)
	}
	return st
}

// decodeID is the JSON-RPC id as json.Unmarshal decodes it into an any
// (a string, a float64; nil when it is neither valid nor present), without
// reflection for the plain ids clients send: strings without escapes and
// integers short enough to be exact as a float64.
func decodeID(raw json.RawMessage) any {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' &&
		bytes.IndexByte(raw[1:n-1], '"') < 0 && bytes.IndexByte(raw[1:n-1], '\\') < 0 && plainASCII(raw[1:n-1]) {
		return string(raw[1 : n-1])
	}
	if n := len(raw); n >= 1 && n <= 15 {
		digits := raw
		if digits[0] == '-' {
			digits = digits[1:]
		}
		if len(digits) > 0 && (digits[0] != '0' || string(raw) == "0") && allDigits(digits) {
			i, _ := strconv.ParseInt(string(raw), 10, 64)
			return float64(i)
		}
	}
	var id any
	if json.Unmarshal(raw, &id) != nil {
		return nil
	}
	return id
}

func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// callMessage is a JSON-RPC request as inspectCall reads it; A is how its
// arguments are read.
type callMessage[A any] struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  callParams[A]   `json:"params"`
}

type callParams[A any] struct {
	Name      string          `json:"name"`
	Arguments A               `json:"arguments"`
	Meta      json.RawMessage `json:"_meta"`
	// What only mcp-go reads: a 2026-07-28 retry's answers and state
	// (approval.go), a task-augmented call.
	InputResponses json.RawMessage `json:"inputResponses"`
	RequestState   json.RawMessage `json:"requestState"`
	Task           json.RawMessage `json:"task"`
}

// plain reports whether the params hold nothing the direct path leaves to
// mcp-go besides _meta.
func (p *callParams[A]) plain() bool {
	return len(p.InputResponses) == 0 && len(p.RequestState) == 0 && len(p.Task) == 0
}

// decodeCall reads body into msg, numbers in the arguments as
// json.Number, and reports whether body is one JSON value whose arguments
// are an object, null or absent. Otherwise inspectCall reads it again.
func decodeCall(body []byte, msg *callMessage[map[string]any]) bool {
	if fastDecodeCall(body, msg) { // decodecall.go: the common shape
		return true
	}
	*msg = callMessage[map[string]any]{} // what the fast reader filled before it gave up
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(msg) != nil {
		return false
	}
	// Decode stops after the first value; json.Unmarshal, like mcp-go,
	// refuses anything after it.
	return len(bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")) == 0
}

// mcpWriter is the response writer mcp-go gets. It implements http.Flusher
// by flushing the inner writer through http.ResponseController (Caddy's
// writers support FlushError/Unwrap but not http.Flusher, and mcp-go only
// streams to an http.Flusher), keeps Unwrap for deadlines, and rewrites the
// error of a failed tools/call.
//
// The HTTP status is left as mcp-go chose it. On protocol 2026-07-28 mcp-go
// answers an unknown tool (its -32602) with 400; the spec's mapping would
// make -32601 a 404, but clients read a 404 as "session terminated" (mcp-go's
// does), so the body carries -32601 and the status stays 400.
type mcpWriter struct {
	inner http.ResponseWriter
	st    *callState
	done  bool // rewrite applied (only ever one)
	// In a session, the ids of requests to the client are sealed
	// (requestids.go).
	requestIDs serverRequestIDs
	session    string
}

func (m *mcpWriter) Header() http.Header         { return m.inner.Header() }
func (m *mcpWriter) Unwrap() http.ResponseWriter { return m.inner }
func (m *mcpWriter) WriteHeader(status int)      { m.inner.WriteHeader(status) }

func (m *mcpWriter) Write(p []byte) (int, error) {
	n := len(p)
	if m.session != "" {
		p = m.requestIDs.sealEvent(p, m.session)
	}
	if m.st != nil && !m.done {
		if out, ok := m.st.rewrite(p); ok {
			p, m.done = out, true
		}
	}
	if _, err := m.inner.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}

func (m *mcpWriter) Flush() {
	_ = http.NewResponseController(m.inner).Flush()
}

// rewrite is p, a write of mcp-go's answer, with what the gateway decided
// instead: the failure of the request (its code and message), or the
// upstream's own result or list entries (passthrough.go); false when p is
// not the answer to st's request.
func (s *callState) rewrite(p []byte) ([]byte, bool) {
	if perr := s.failure(); perr != nil {
		return rewriteMessage(p, func(msg []byte) ([]byte, bool) { return rewriteJSON(msg, s.id, perr, s.overrides) })
	}
	return s.passOn(p)
}

// rewriteMessage applies edit to the JSON-RPC message of p, a JSON body or
// one SSE event. Anything else is left alone.
func rewriteMessage(p []byte, edit func(msg []byte) ([]byte, bool)) ([]byte, bool) {
	const dataPrefix = "data: "
	if bytes.HasPrefix(p, []byte("event:")) || bytes.HasPrefix(p, []byte("id:")) || bytes.HasPrefix(p, []byte(dataPrefix)) {
		lines := bytes.Split(p, []byte("\n"))
		for i, line := range lines {
			if payload, ok := bytes.CutPrefix(line, []byte(dataPrefix)); ok {
				if out, ok := edit(payload); ok {
					lines[i] = append([]byte(dataPrefix), out...)
					return bytes.Join(lines, []byte("\n")), true
				}
			}
		}
		return p, false
	}
	trimmed := bytes.TrimRight(p, "\n")
	out, ok := edit(trimmed)
	if !ok {
		return p, false
	}
	return append(out, p[len(trimmed):]...), true
}

// rewriteJSON replaces the error object (with overrides, also the result)
// of the JSON-RPC response with the given id.
func rewriteJSON(p []byte, id any, perr *pipeline.Error, overrides bool) ([]byte, bool) {
	var resp struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   json.RawMessage `json:"error"`
		Result  json.RawMessage `json:"result"`
	}
	if json.Unmarshal(p, &resp) != nil || (len(resp.Error) == 0 && !(overrides && len(resp.Result) > 0)) {
		return nil, false
	}
	if !sameID(resp.ID, id) {
		return nil, false
	}
	out, err := json.Marshal(map[string]any{
		"jsonrpc": resp.JSONRPC,
		"id":      resp.ID,
		"error":   errorObject(perr),
	})
	return out, err == nil
}

// sameID reports whether raw, a response's id as written, is id (decoded).
func sameID(raw json.RawMessage, id any) bool {
	var got any
	return json.Unmarshal(raw, &got) == nil && fmt.Sprint(got) == fmt.Sprint(id)
}

// errorObject is a failure's JSON-RPC error object: an upstream's error
// passed on keeps its data too.
func errorObject(perr *pipeline.Error) *mcp.JSONRPCErrorDetails {
	e := &mcp.JSONRPCErrorDetails{Code: perr.Code, Message: perr.Error()}
	if len(perr.Data) > 0 {
		e.Data = perr.Data
	}
	return e
}

// writeJSONRPCError answers a request mcp-go never saw.
func writeJSONRPCError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": code, "message": msg},
	})
}
