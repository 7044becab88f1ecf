package pipeline

import (
	"context"
	"encoding/json"
)

// Peer is the downstream client of the call in progress, as far as a tool
// may talk to it while it runs: a proxied MCP tool passes on the progress
// and log messages of its upstream server and the requests that server
// sends to its client (sampling, elicitation, roots). The transport puts
// one in the call's context (WithPeer) when the call came on an MCP
// session; a call without one (`caddy mcp call`, the direct path of a tool
// that is not Interactive) has no client to talk to.
type Peer interface {
	// SessionID names the downstream session: two calls with the same id
	// come from the same client.
	SessionID() string
	// ProgressToken is the token the caller asked progress under, nil when
	// it asked for none.
	ProgressToken() any
	// Progress sends notifications/progress for the call (under the
	// caller's own token).
	Progress(progress float64, total *float64, message string) error
	// Log sends notifications/message with params as the server sent them
	// (level is theirs), if the client's log level lets it through.
	Log(level string, params map[string]any) error
	// Request sends a request to the client (sampling/createMessage,
	// elicitation/create, roots/list) and returns its result. ctx ending
	// abandons it.
	Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

type peerKey struct{}

// WithPeer returns ctx carrying the call's downstream client.
func WithPeer(ctx context.Context, p Peer) context.Context {
	return context.WithValue(ctx, peerKey{}, p)
}

// PeerFrom is the call's downstream client, or nil.
func PeerFrom(ctx context.Context) Peer {
	p, _ := ctx.Value(peerKey{}).(Peer)
	return p
}
