package fastpath

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/pipeline"
)

// The Writer is the one place where edgemcp's error codes meet mcp-go.
//
// mcp-go answers an unknown tool with -32602 and turns any error returned by
// a tool handler into -32603; no hook changes a code. edgemcp answers -32601
// and -32000 (docs/architecture.md, Errors). So the shell reads the
// (bounded) POST body itself, notes the JSON-RPC id and tool name of a
// tools/call in the request context (Call), and hands mcp-go a Writer that
// rewrites the error of exactly that id with the code and message the
// pipeline decided. A POST carries one JSON-RPC message; a JSON response
// arrives in one Write, and so does each SSE event.

// Writer is the response writer mcp-go gets. It implements http.Flusher
// by flushing the inner writer through http.ResponseController (Caddy's
// writers support FlushError/Unwrap but not http.Flusher, and mcp-go only
// streams to an http.Flusher), keeps Unwrap for deadlines, and rewrites the
// answer to its call.
//
// The HTTP status is left as mcp-go chose it. On protocol 2026-07-28 mcp-go
// answers an unknown tool (its -32602) with 400; the spec's mapping would
// make -32601 a 404, but clients read a 404 as "session terminated" (mcp-go's
// does), so the body carries -32601 and the status stays 400.
type Writer struct {
	inner http.ResponseWriter
	call  *Call
	done  bool // rewrite applied (only ever one)
	// In a session, the ids of requests to the client are sealed
	// (Shell.SealEvent).
	shell   Shell
	session string
	// events counts the SSE events written on the session's streams
	// (ClientSessions.eventsOf); nil outside a known session.
	events *atomic.Int64
}

func (m *Writer) Header() http.Header         { return m.inner.Header() }
func (m *Writer) Unwrap() http.ResponseWriter { return m.inner }
func (m *Writer) WriteHeader(status int)      { m.inner.WriteHeader(status) }

func (m *Writer) Write(p []byte) (int, error) {
	n := len(p)
	if m.session != "" {
		p = m.shell.SealEvent(p, m.session)
	}
	if m.call != nil && !m.done {
		if out, ok := m.call.rewrite(p); ok {
			p, m.done = out, true
		}
	}
	if _, err := m.inner.Write(p); err != nil {
		return 0, err
	}
	if bytes.HasPrefix(p, sseEvent) {
		if m.events != nil {
			m.events.Add(1)
		}
		if m.call != nil {
			m.call.events.Add(1)
		}
	}
	return n, nil
}

// sseEvent begins each event mcp-go writes on a stream.
var sseEvent = []byte("event: ")

func (m *Writer) Flush() {
	_ = http.NewResponseController(m.inner).Flush()
}

// rewrite is p, a write of mcp-go's answer, with what the gateway decided
// instead: the failure of the request (its code and message), or the
// upstream's own result or list entries (passOn); false when p is not the
// answer to c's request.
func (c *Call) rewrite(p []byte) ([]byte, bool) {
	if perr := c.Failure(); perr != nil {
		return rewriteMessage(p, func(msg []byte) ([]byte, bool) { return rewriteJSON(msg, c.ID, perr, c.Overrides) })
	}
	return c.passOn(p)
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
		"error":   jsonrpc.ErrorObject(perr),
	})
	return out, err == nil
}

// sameID reports whether raw, a response's id as written, is id (decoded).
func sameID(raw json.RawMessage, id any) bool {
	var got any
	return json.Unmarshal(raw, &got) == nil && fmt.Sprint(got) == fmt.Sprint(id)
}

// Interface guards.
var (
	_ http.ResponseWriter = (*Writer)(nil)
	_ http.Flusher        = (*Writer)(nil)
	_ pipeline.Peer       = (*directPeer)(nil)
	_ pipeline.Peer       = (*mcpPeer)(nil)
)
