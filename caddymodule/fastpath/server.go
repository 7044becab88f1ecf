// Package fastpath is how the gateway meets mcp-go on the wire. It answers
// the plain tools/call and tools/list itself, the same bytes mcp-go would
// write, where mcp-go would add nothing but CPU (see Server.Answer and
// Server.AnswerList); it relays everything else to mcp-go's streamable
// HTTP server through a Writer that puts the gateway's error codes and a
// source's own text into mcp-go's answer; and both paths end in
// Server.RunTool. The shell (the Caddy handler) gives it what only the
// shell knows through one interface, Shell.
package fastpath

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Shell is what the fast path asks of the Caddy handler around it.
type Shell interface {
	// Registry is the tool set now. A request resolves it once
	// (Call.Registry) and keeps it to its end.
	Registry() Registry
	// StartCall opens the telemetry of a call of the tool name of reg;
	// the returned context carries the pipeline's observer.
	StartCall(ctx context.Context, reg Registry, name string) (context.Context, Record)
	// UnknownTool records a tools/call of a name no tool has (mcp-go
	// answers it, so no RunTool sees it).
	UnknownTool(ctx context.Context, call *Call)
	// Listable reports whether the caller of ctx may see t in tools/list.
	Listable(ctx context.Context, t *pipeline.Tool) bool
	// SessionLive reports whether r's session id was issued to its caller
	// and not ended.
	SessionLive(r *http.Request) bool
	// SealEvent is p, mcp-go's write to a client in session, with the ids
	// of requests to the client sealed.
	SealEvent(p []byte, session string) []byte
	// RequestID is Caddy's id of the HTTP request of ctx.
	RequestID(ctx context.Context) string
}

// Record is the telemetry of one call: the pipeline's observer, ended
// with the call's outcome.
type Record interface {
	Stage(ctx context.Context, call *pipeline.Call, stage pipeline.Stage) (context.Context, func(error))
	Finish(ctx context.Context, perr *pipeline.Error)
}

// Options are the settings of the endpoint the fast path reads.
type Options struct {
	// ServerInfo is the gateway's name and version, as a sessionless
	// result's _meta says them.
	ServerInfo mcp.Implementation
	// ErrorsAsResults: error_mode result (a failure is an isError result).
	ErrorsAsResults bool
	// FullErrorDetail: error_detail full (a database's own error text is
	// shown, not its code and the request id).
	FullErrorDetail bool
	// ListFilter: some tool may be hidden from a caller (auth), so that a
	// tools/list asks Shell.Listable of each.
	ListFilter bool
	// DirectCalls and DirectLists count the requests answered here.
	DirectCalls, DirectLists prometheus.Counter
	// Tasks are the gateway's tasks (AnswerTask); nil when no tool runs
	// as one.
	Tasks *TaskOptions
}

// PageSize is how many tools one tools/list page holds: a registry with
// thousands of tools (large OpenAPI documents, MCP sources) is listed a
// page at a time, with nextCursor. mcp-go is given the same.
const PageSize = 500

// Server is the fast path of one endpoint.
type Server struct {
	shell      Shell
	opts       Options
	sessions   *ClientSessions
	metas      *sessionlessMetas
	mcp        *server.MCPServer
	streamable *server.StreamableHTTPServer
}

// New is the fast path of an endpoint; Attach gives it the mcp-go server,
// whose hooks need Sessions first.
func New(shell Shell, opts Options) *Server {
	return &Server{shell: shell, opts: opts, sessions: &ClientSessions{}, metas: newSessionlessMetas()}
}

// Attach gives s the endpoint's mcp-go server and its transport.
func (s *Server) Attach(srv *server.MCPServer, streamable *server.StreamableHTTPServer) {
	s.mcp, s.streamable = srv, streamable
}

// Sessions are the endpoint's mcp-go sessions, for its hooks.
func (s *Server) Sessions() *ClientSessions { return s.sessions }

// ReadBody reads a POST body, bounded by max. A body it cannot take is a
// caddyhttp.HandlerError for the shell to answer: too large (413) or
// unreadable (400).
func ReadBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err == nil {
		return body, nil
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, caddyhttp.Error(http.StatusRequestEntityTooLarge, fmt.Errorf("request body larger than %d bytes", max))
	}
	return nil, caddyhttp.Error(http.StatusBadRequest, errors.New("cannot read request body"))
}

// Relay hands r to mcp-go's streamable HTTP server, with body (when not
// nil) as its body and a Writer that rewrites mcp-go's answer to r's Call
// (CallFrom) and, in session (an id the shell verified), seals the ids of
// requests to the client.
func (s *Server) Relay(w http.ResponseWriter, r *http.Request, body []byte, session string) {
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	s.streamable.ServeHTTP(&Writer{inner: w, call: CallFrom(r.Context()), shell: s.shell, session: session,
		events: s.sessions.eventsOf(r.Header.Get("Mcp-Session-Id"))}, r)
}
