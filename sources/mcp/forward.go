package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
)

// What passes between the upstream server and the downstream client of a
// call (README, Sources: MCP servers): the upstream's progress under the
// caller's progressToken, its log messages, the requests it sends to its
// client (sampling, elicitation, roots) and cancellation both ways.
//
// An upstream session may serve several callers at once, and over stdio a
// message from the server does not say which request it is about. So:
//   - progress is matched by token: each forwarded call gets its own;
//   - a request that arrives on the HTTP stream of one call's POST belongs
//     to that call (mcp-go hands the handler that POST's context);
//   - anything else goes to the one downstream session that has calls in
//     flight on this upstream session. With calls from several sessions in
//     flight it cannot be told apart: a request is refused, a log message
//     goes to Caddy's log. Nothing reaches a session that is not calling,
//     but for log messages a call counts for logLinger after it ended: an
//     HTTP server sends a message it does not tie to the request on its
//     other stream, which may be read after the call's response.
//
// With `session per_caller` (callers) each upstream session has one
// verified caller, so whatever the server sends on it reaches only that
// caller's downstream sessions.

// Client capabilities the gateway declares upstream: it passes these
// requests on to its own clients (and refuses them for a client that did
// not declare them). Roots only with session per_caller
// (docs/sources.md, MCP servers, Roots): a server's roots say what it may touch, and on a
// session every caller shares (every stdio source, an HTTP source's shared
// session) they are the operator's to set, on its command line or in its
// own configuration; one caller's roots would change what the server does
// for all (server-filesystem replaces its directories with them). A
// caller's own session may take that caller's roots.
func forwardedCapabilities(roots bool) mcp.ClientCapabilities {
	caps := mcp.ClientCapabilities{
		Sampling:    &mcp.SamplingCapability{},
		Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}},
	}
	if roots {
		caps.Roots = &struct {
			ListChanged bool `json:"listChanged,omitempty"`
		}{}
	}
	return caps
}

// logLinger is how long after its end a call still takes the log
// messages of its upstream session.
const logLinger = 2 * time.Second

// inflight is one forwarded call.
type inflight struct {
	peer  pipeline.Peer
	token string    // the upstream progress token, "" when the caller asked none
	ended time.Time // zero while in flight
}

// callKey carries the call's *inflight in the context of its upstream
// request, where the HTTP transport's handler of server requests finds it.
type callKey struct{}

// relay is the forwarding state of one upstream session.
type relay struct {
	log     *zap.Logger
	roots   bool // roots/list is forwarded (forwardedCapabilities)
	tokens  atomic.Int64
	mu      sync.Mutex
	calls   map[*inflight]struct{}
	byToken map[string]*inflight
	serving map[string]context.CancelFunc // the server's requests being forwarded, by id
	swept   time.Time                     // last forgetEnded pass
}

func newRelay(log *zap.Logger, roots bool) *relay {
	return &relay{log: log, roots: roots, calls: map[*inflight]struct{}{}, byToken: map[string]*inflight{},
		serving: map[string]context.CancelFunc{}}
}

// begin registers a call by peer (nil: a call without a session, which
// gets nothing forwarded) and returns it with the function that ends it.
func (r *relay) begin(peer pipeline.Peer) (*inflight, func()) {
	in := &inflight{peer: peer}
	if peer == nil {
		return in, func() {}
	}
	if peer.ProgressToken() != nil {
		in.token = fmt.Sprintf("edgemcp-progress-%d", r.tokens.Add(1))
	}
	r.mu.Lock()
	r.forgetEnded(time.Now())
	r.calls[in] = struct{}{}
	if in.token != "" {
		r.byToken[in.token] = in
	}
	r.mu.Unlock()
	return in, func() {
		r.mu.Lock()
		in.ended = time.Now()
		delete(r.byToken, in.token)
		r.mu.Unlock()
	}
}

// forgetEnded drops the calls that ended more than logLinger ago, at most
// once per logLinger: one pass over the calls then, rather than a timer
// for every call. Callers hold r.mu.
func (r *relay) forgetEnded(now time.Time) {
	if now.Sub(r.swept) < logLinger {
		return
	}
	r.swept = now
	for in := range r.calls {
		if !in.ended.IsZero() && now.Sub(in.ended) > logLinger {
			delete(r.calls, in)
		}
	}
}

// only is the one downstream session with calls in flight, or nil. With
// lingering, when no call is in flight, the one session whose calls ended
// less than logLinger ago. A call in flight wins over a lingering one: a
// message sent during a call belongs to it, whoever called just before.
func (r *relay) only(lingering bool) pipeline.Peer {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.onlyPeer(func(in *inflight) bool { return in.ended.IsZero() }); p != nil || !ok || !lingering {
		return p
	}
	now := time.Now()
	p, _ := r.onlyPeer(func(in *inflight) bool { return now.Sub(in.ended) <= logLinger })
	return p
}

// onlyPeer is the one session among the calls that match; ok is false
// when several sessions match.
func (r *relay) onlyPeer(match func(*inflight) bool) (found pipeline.Peer, ok bool) {
	for in := range r.calls {
		if !match(in) {
			continue
		}
		if found != nil && found.SessionID() != in.peer.SessionID() {
			return nil, false
		}
		if found == nil {
			found = in.peer
		}
	}
	return found, true
}

// notify handles the server's notifications that concern callers; it
// reports whether n was one.
func (r *relay) notify(n mcp.JSONRPCNotification) bool {
	params := n.Params.AdditionalFields
	switch n.Method {
	case string(mcp.MethodNotificationProgress):
		token := fmt.Sprint(params["progressToken"])
		r.mu.Lock()
		in := r.byToken[token]
		r.mu.Unlock()
		if in == nil {
			return true // a call that ended, or a token that is not ours
		}
		progress, _ := params["progress"].(float64)
		var total *float64
		if t, ok := params["total"].(float64); ok {
			total = &t
		}
		message, _ := params["message"].(string)
		if err := in.peer.Progress(progress, total, message); err != nil {
			r.log.Debug("progress not passed on", zap.Error(err))
		}
	case "notifications/message":
		level, _ := params["level"].(string)
		if p := r.only(true); p != nil {
			if err := p.Log(level, params); err != nil {
				r.log.Debug("log message not passed on", zap.Error(err))
			}
			return true
		}
		logger, _ := params["logger"].(string)
		r.log.Info("MCP server log message", zap.String("level", level), zap.String("logger", logger),
			zap.Any("data", params["data"]))
	case string(mcp.MethodNotificationCancelled):
		id := fmt.Sprint(params["requestId"])
		r.mu.Lock()
		cancel := r.serving[id]
		r.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	default:
		return false
	}
	return true
}

// errUpstreamCancelled ends a forwarded request the server cancelled.
var errUpstreamCancelled = errors.New("the MCP server cancelled its request")

// serve is the transport's handler of the server's requests: ping is
// answered here, sampling, elicitation and roots are forwarded to the
// caller they belong to.
func (r *relay) serve(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	switch mcp.MCPMethod(req.Method) {
	case mcp.MethodPing:
		return transport.NewJSONRPCResultResponse(req.ID, json.RawMessage(`{}`)), nil
	case mcp.MethodSamplingCreateMessage, mcp.MethodElicitationCreate:
	case mcp.MethodListRoots:
		if !r.roots {
			return transport.NewJSONRPCErrorResponse(req.ID, mcp.METHOD_NOT_FOUND, "roots are not forwarded on a session every caller of the gateway shares", nil), nil
		}
	default:
		return transport.NewJSONRPCErrorResponse(req.ID, mcp.METHOD_NOT_FOUND, fmt.Sprintf("method %q is not supported by the gateway", req.Method), nil), nil
	}
	var peer pipeline.Peer
	if in, ok := ctx.Value(callKey{}).(*inflight); ok {
		peer = in.peer
	} else {
		peer = r.only(false)
	}
	if peer == nil {
		return transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR,
			req.Method+": no single caller of the gateway to forward it to (it is forwarded only during a tool call, to the calling client)", nil), nil
	}
	params, err := json.Marshal(req.Params)
	if err != nil {
		return transport.NewJSONRPCErrorResponse(req.ID, mcp.INVALID_PARAMS, err.Error(), nil), nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	id := req.ID.String()
	r.mu.Lock()
	r.serving[id] = func() { cancel(errUpstreamCancelled) }
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.serving, id)
		r.mu.Unlock()
	}()

	res, err := peer.Request(ctx, req.Method, params)
	if errors.Is(context.Cause(ctx), errUpstreamCancelled) {
		return nil, nil // a cancelled request gets no response
	}
	if err != nil {
		return transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, err.Error(), nil), nil
	}
	return transport.NewJSONRPCResultResponse(req.ID, res), nil
}

// forward sends a tools/call on behalf of the call in ctx: with a progress
// token of its own when the caller asked for progress, and in a context
// that marks the server's requests on its stream as the call's.
func (s *session) forward(ctx context.Context, params map[string]any) (json.RawMessage, bool, error) {
	in, end := s.relay.begin(pipeline.PeerFrom(ctx))
	defer end()
	if in.token != "" {
		withMeta := make(map[string]any, len(params)+1)
		for k, v := range params {
			withMeta[k] = v
		}
		withMeta["_meta"] = map[string]any{"progressToken": in.token}
		params = withMeta
	}
	return s.request(context.WithValue(ctx, callKey{}, in), string(mcp.MethodToolsCall), params)
}

// cancelUpstream tells the server to stop working on request id, whose
// caller went away (the downstream client cancelled, the call timed out).
func (s *session) cancelUpstream(id mcp.RequestId, cause error) {
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: string(mcp.MethodNotificationCancelled),
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": id, "reason": cause.Error()}},
	}}
	// Off the caller's path: a server that does not read must not hold it.
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), cancelTimeout)
		defer cancel()
		_ = s.tr.SendNotification(ctx, n)
	}()
}
