package fastpath

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A tool that may talk to its client (a proxied MCP tool) usually says
// nothing while it runs: most calls are a request and its result. So such
// a call may take the direct path (Server.Answer) too, with a directPeer in
// place of mcp-go's session, when all it could send fits the POST's own
// answer: its log messages (as mcp-go sends them, they upgrade the answer
// to an event stream, the result being its last event), and no request
// the client could answer (it declared none of sampling, elicitation and
// roots, so every request is refused, exactly as mcpPeer refuses it). No
// progress either: a call with a progress token carries _meta, which the
// direct path leaves to mcp-go.

// ClientSessions are the initialized sessions of the endpoint's mcp-go
// server, by id, recorded by its session hooks (Hooks): mcp-go does not
// look its sessions up for others.
type ClientSessions struct {
	m       sync.Map // id → *clientSession
	leveled sync.Map // ids of the sessions that set a log level (logPasses)
}

// clientSession is one session and the count of events written on any of
// its streams (Writer), by which a call knows its notifications left
// (mcpPeer.settle).
type clientSession struct {
	sess   server.ClientSession
	events atomic.Int64
}

// Hooks adds the hooks that keep c.
func (c *ClientSessions) Hooks(hooks *server.Hooks) {
	hooks.AddOnRegisterSession(func(_ context.Context, s server.ClientSession) {
		c.m.Store(s.SessionID(), &clientSession{sess: s})
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) {
		if e, ok := c.m.Load(s.SessionID()); ok && e.(*clientSession).sess == s {
			c.m.CompareAndDelete(s.SessionID(), e)
		}
		c.leveled.Delete(s.SessionID())
	})
	hooks.AddAfterSetLevel(func(ctx context.Context, _ any, _ *mcp.SetLevelRequest, _ *mcp.EmptyResult) {
		if s := server.ClientSessionFromContext(ctx); s != nil {
			c.leveled.Store(s.SessionID(), struct{}{})
		}
	})
}

func (c *ClientSessions) get(id string) server.ClientSession {
	if e, ok := c.m.Load(id); ok {
		return e.(*clientSession).sess
	}
	return nil
}

// eventsOf is the count of events written on the streams of session id,
// nil for a session this server does not know.
func (c *ClientSessions) eventsOf(id string) *atomic.Int64 {
	if e, ok := c.m.Load(id); ok {
		return &e.(*clientSession).events
	}
	return nil
}

// directPeerFor is the peer of a direct call that may talk back, or nil
// when the call must go through mcp-go: its session is unknown to this
// server (begun before a reload), the client could answer a request, or
// it cannot read an event stream.
func (s *Server) directPeerFor(w http.ResponseWriter, r *http.Request) *directPeer {
	sess := s.sessions.get(r.Header.Get("Mcp-Session-Id"))
	if sess == nil || takesRequests(sessionCapabilities(sess)) || !acceptsEventStream(r) {
		return nil
	}
	return &directPeer{w: w, srv: s.mcp, sess: sess, sessions: s.sessions}
}

// directPeer is a direct call's downstream client (pipeline.Peer).
type directPeer struct {
	w        http.ResponseWriter
	srv      *server.MCPServer
	sess     server.ClientSession
	sessions *ClientSessions

	mu       sync.Mutex
	upgraded bool // the answer is an event stream
	answered bool // the result was written
}

func (p *directPeer) SessionID() string  { return p.sess.SessionID() }
func (p *directPeer) ProgressToken() any { return nil }

// Progress: the caller asked for none.
func (p *directPeer) Progress(float64, *float64, string) error { return nil }

// Log writes the message to the answer, as mcp-go's POST handler does
// while the call runs; after the result, it goes to the session's queue
// (its GET stream), as mcpPeer's does.
func (p *directPeer) Log(level string, params map[string]any) error {
	ctx := p.srv.WithContext(context.Background(), p.sess)
	if !p.sessions.logPasses(ctx, p.sess, mcp.LoggingLevel(level)) {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.answered {
		return p.srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationMessage), params)
	}
	return p.writeEvent(mcp.JSONRPCNotification{
		JSONRPC:      mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: string(mcp.MethodNotificationMessage), Params: mcp.NotificationParams{AdditionalFields: params}},
	})
}

// Request: the client declared none of the capabilities requests need.
func (p *directPeer) Request(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	if err := refuseRequest(sessionCapabilities(p.sess), method); err != nil {
		return nil, err
	}
	return nil, errors.New("the client's capabilities changed during the call")
}

// writeEvent writes msg as one event of the answer, upgrading it to an
// event stream first, with the headers mcp-go sets. Callers hold mu.
func (p *directPeer) writeEvent(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if !p.upgraded {
		hdr := p.w.Header()
		hdr.Set("Content-Type", "text/event-stream")
		hdr.Set("Connection", "keep-alive")
		hdr.Set("Cache-Control", "no-cache")
		p.w.WriteHeader(http.StatusOK)
		p.upgraded = true
	}
	out := make([]byte, 0, len(b)+24)
	out = append(append(append(out, "event: message\ndata: "...), b...), "\n\n"...)
	if _, err := p.w.Write(out); err != nil {
		return err
	}
	return http.NewResponseController(p.w).Flush()
}

// answer writes the call's result: as the last event when the answer was
// upgraded, else as JSON (false: the caller writes it).
func (p *directPeer) answer(msg any) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answered = true
	if !p.upgraded {
		return false
	}
	_ = p.writeEvent(msg)
	return true
}

// acceptsEventStream: the client reads text/event-stream answers.
func acceptsEventStream(r *http.Request) bool {
	return acceptsType(r, "text/event-stream")
}
