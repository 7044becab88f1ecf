package fastpath

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/pipeline"
)

// A tool that talks to its client while it runs (a proxied MCP tool passing
// on its upstream's progress, log messages, sampling, elicitation and roots
// requests: docs/sources.md, MCP servers) finds the client in its context
// as a pipeline.Peer. mcpPeer is that peer on an mcp-go session; a call on
// the direct path has a directPeer instead, and only when all such a tool
// could send fits that path's answer.

// withPeer returns ctx carrying the calling session as the call's peer,
// when the call has a session, and the function to run before the
// handler returns its result.
func withPeer(ctx context.Context, req mcp.CallToolRequest, sessions *ClientSessions) (context.Context, func()) {
	srv := server.ServerFromContext(ctx)
	sess := server.ClientSessionFromContext(ctx)
	if srv == nil || sess == nil {
		return ctx, func() {}
	}
	p := &mcpPeer{ctx: ctx, srv: srv, sess: sess, sessions: sessions}
	if m := req.Params.Meta; m != nil && m.ProgressToken != nil {
		p.token = m.ProgressToken
	}
	return pipeline.WithPeer(ctx, p), p.settle
}

// settleWait bounds how long a call's result waits for its notifications
// to be written.
const settleWait = 100 * time.Millisecond

// settle lets the notifications the call sent be written before its
// result is. mcp-go's POST handler drops a notification its forwarder took
// off the session's queue just as the handler returned (the last progress
// or log message of a tool is sent right before its result), and another
// goroutine (the client's GET stream) may be the one that takes it. So the
// handler waits until as many events as the call queued were written on
// the session's streams (ClientSessions.eventsOf counts them), or on the
// request's own answer when it has no session (2026-07-28), bounded by
// settleWait: an event of another call may count for one of ours, which
// only shortens the wait.
func (p *mcpPeer) settle() {
	queued := p.queued.Load()
	if queued == 0 {
		return
	}
	q := p.sess.NotificationChannel()
	written := func() bool {
		if p.events == nil { // no count to wait on: a request the shell did not inspect
			return len(q) == 0
		}
		return p.events.Load()-p.base >= queued
	}
	for deadline := time.Now().Add(settleWait); !written() && time.Now().Before(deadline); {
		time.Sleep(200 * time.Microsecond)
	}
	if p.events == nil {
		time.Sleep(time.Millisecond) // for the taker to write it
	}
}

// mcpPeer is one call's downstream client. ctx is the call's handler
// context: mcp-go finds the session (and the request's SSE stream) there.
type mcpPeer struct {
	ctx      context.Context
	srv      *server.MCPServer
	sess     server.ClientSession
	sessions *ClientSessions // which sessions set a log level
	token    mcp.ProgressToken

	once   sync.Once
	events *atomic.Int64 // events written where the call's notifications go (settle)
	base   int64         // events before the call's first notification
	queued atomic.Int64  // notifications the call queued
}

func (p *mcpPeer) SessionID() string  { return p.sess.SessionID() }
func (p *mcpPeer) ProgressToken() any { return p.token }

func (p *mcpPeer) Progress(progress float64, total *float64, message string) error {
	if p.token == nil {
		return nil
	}
	params := map[string]any{"progressToken": p.token, "progress": progress}
	if total != nil {
		params["total"] = *total
	}
	if message != "" {
		params["message"] = message
	}
	return p.send(string(mcp.MethodNotificationProgress), params)
}

func (p *mcpPeer) Log(level string, params map[string]any) error {
	if !p.sessions.logPasses(p.ctx, p.sess, mcp.LoggingLevel(level)) {
		return nil
	}
	return p.send(string(mcp.MethodNotificationMessage), params)
}

// send queues a notification for the session's streams, counting it for
// settle.
func (p *mcpPeer) send(method string, params map[string]any) error {
	p.once.Do(func() {
		p.events = p.sessions.eventsOf(p.sess.SessionID())
		if c := CallFrom(p.ctx); p.events == nil && c != nil {
			p.events = &c.events // a request without a session: its answer is the one stream
		}
		if p.events != nil {
			p.base = p.events.Load()
		}
	})
	err := p.srv.SendNotificationToClient(p.ctx, method, params)
	if err == nil {
		p.queued.Add(1)
	}
	return err
}

// logPasses reports whether an upstream's log message at level reaches
// the client of ctx's request (docs/sources.md, MCP servers): on
// 2026-07-28 by the level the request asked for (none: no message), else
// by the level the session set with logging/setLevel. A session that set
// none gets every message the server chose to send, as it would directly
// (mcp-go's own default would hold back everything below error).
func (c *ClientSessions) logPasses(ctx context.Context, sess server.ClientSession, level mcp.LoggingLevel) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.LogLevel != "" && level.ShouldSendTo(info.LogLevel)
	}
	if _, set := c.leveled.Load(sess.SessionID()); !set {
		return true
	}
	sl, ok := sess.(server.SessionWithLogging)
	return ok && level.ShouldSendTo(sl.GetLogLevel())
}

// Request forwards a client request through mcp-go, which writes it to
// the session's stream and waits for the answer. A client that did not
// declare the capability is refused at once rather than left waiting.
func (p *mcpPeer) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	// mcp-go reads the session from the context: the call's, ended by
	// either the call or ctx.
	rctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()

	if err := refuseRequest(sessionCapabilities(p.sess), method); err != nil {
		return nil, err
	}
	var res any
	var err error
	switch mcp.MCPMethod(method) {
	case mcp.MethodSamplingCreateMessage:
		// Message contents stay as decoded maps: mcp-go writes them back
		// as they came.
		req := mcp.CreateMessageRequest{Request: mcp.Request{Method: method}}
		if err := json.Unmarshal(params, &req.CreateMessageParams); err != nil {
			return nil, fmt.Errorf("bad sampling/createMessage params: %v", err)
		}
		res, err = p.srv.RequestSampling(rctx, req)
	case mcp.MethodElicitationCreate:
		req := mcp.ElicitationRequest{Request: mcp.Request{Method: method}}
		if err := json.Unmarshal(params, &req.Params); err != nil {
			return nil, fmt.Errorf("bad elicitation/create params: %v", err)
		}
		res, err = p.srv.RequestElicitation(rctx, req)
	case mcp.MethodListRoots:
		res, err = p.srv.RequestRoots(rctx, mcp.ListRootsRequest{Request: mcp.Request{Method: method}})
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return json.Marshal(res)
}

// sessionCapabilities are what the client declared at initialize.
func sessionCapabilities(sess server.ClientSession) mcp.ClientCapabilities {
	if ci, ok := sess.(server.SessionWithClientInfo); ok {
		return ci.GetClientCapabilities()
	}
	return mcp.ClientCapabilities{}
}

// refuseRequest is why a request to the client is not forwarded: a method
// that is not forwarded, or one whose capability the client did not
// declare (refused at once rather than left waiting); nil when it is.
func refuseRequest(caps mcp.ClientCapabilities, method string) error {
	switch mcp.MCPMethod(method) {
	case mcp.MethodSamplingCreateMessage:
		if caps.Sampling == nil {
			return errors.New("the gateway's client did not declare the sampling capability")
		}
	case mcp.MethodElicitationCreate:
		if caps.Elicitation == nil {
			return errors.New("the gateway's client did not declare the elicitation capability")
		}
	case mcp.MethodListRoots:
		if caps.Roots == nil {
			return errors.New("the gateway's client did not declare the roots capability")
		}
	default:
		return fmt.Errorf("method %q is not forwarded to clients", method)
	}
	return nil
}

// takesRequests reports whether a client declared any capability that lets
// a tool's requests reach it.
func takesRequests(caps mcp.ClientCapabilities) bool {
	return caps.Sampling != nil || caps.Elicitation != nil || caps.Roots != nil
}
