package pipeline

import (
	"context"
	"encoding/json"
)

// CatalogSource is a Source that also brings resources, resource templates
// and prompts (an upstream MCP server). The gateway serves them beside the
// declared ones: resources under their own URIs, prompts named into the
// source's namespace like its tools (ToolName).
type CatalogSource interface {
	// Catalog is what the source listed last, as the upstream's JSON
	// objects; empty while it has not been reached.
	Catalog() SourceCatalog
	// ReadResource forwards resources/read and returns the upstream's
	// result. The ctx of ReadResource, GetPrompt and Complete carries the
	// verified caller, when there is one (RequestCaller), for a source that
	// keeps an upstream session per caller.
	ReadResource(ctx context.Context, uri string) (json.RawMessage, error)
	// GetPrompt forwards prompts/get under the prompt's original name.
	GetPrompt(ctx context.Context, name string, args map[string]string) (json.RawMessage, error)
	// Complete forwards completion/complete (params with the upstream's
	// own reference) and returns the upstream's result.
	Complete(ctx context.Context, params map[string]any) (json.RawMessage, error)
}

// SourceCatalog is a source's resources, resource templates and prompts,
// every page of each list, and its server's instructions (which the
// gateway gives its clients under the source's name).
type SourceCatalog struct {
	Resources    []json.RawMessage
	Templates    []json.RawMessage
	Prompts      []json.RawMessage
	Instructions string
}

// ResourceSubscriber is a CatalogSource whose upstream may take
// resources/subscribe. The gateway passes its clients' subscriptions on,
// by downstream session, and the upstream's notifications/resources/updated
// back to exactly the sessions subscribed to that URI.
type ResourceSubscriber interface {
	// Subscribable reports whether the upstream declared the resources
	// capability with subscribe.
	Subscribable() bool
	// SubscribeResource records that session subscribed to uri; the first
	// session to subscribe to a URI subscribes upstream, and an upstream
	// refusal is returned (nothing is recorded then).
	SubscribeResource(ctx context.Context, uri, session string) error
	// UnsubscribeResource removes that subscription; when no session is
	// left on uri the source unsubscribes upstream.
	UnsubscribeResource(ctx context.Context, uri, session string) error
	// EndSession removes every subscription of a session that ended.
	EndSession(session string)
	// OnResourceUpdated sets what the source calls when the upstream says
	// uri changed, with the sessions subscribed to it.
	OnResourceUpdated(updated func(uri string, sessions []string))
}

type requestCallerKey struct{}

// WithRequestCaller returns ctx carrying the verified caller of a request
// that is not a tools/call (a resources/read, prompts/get or completion
// forwarded to a source): its identity and request, as a Call has them.
func WithRequestCaller(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, requestCallerKey{}, c)
}

// RequestCaller is the caller WithRequestCaller put in ctx, or nil.
func RequestCaller(ctx context.Context) *Call {
	c, _ := ctx.Value(requestCallerKey{}).(*Call)
	return c
}
