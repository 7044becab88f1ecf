package fastpath

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Call is what the HTTP layer knows about one request mcp-go may see: a
// tools/call (Inspect) or a resources/read (the shell's). It travels in
// the request's context (CallFrom), so that the handlers mcp-go runs
// record their failure here and the Writer turns mcp-go's answer into the
// gateway's.
type Call struct {
	ID    any             // the JSON-RPC id, decoded
	RawID json.RawMessage // as sent, for a direct answer
	Name  string          // the tool's name, as the client gave it
	// Args are the arguments decoded with UseNumber: integers beyond 2^53
	// stay exact (mcp-go's own decoding makes them float64).
	Args       map[string]any
	Header     http.Header
	RemoteAddr string
	TLS        *tls.ConnectionState
	// Registry is the tool set the call resolved, once, in Inspect: the
	// call sees it from resolution to response, whatever swaps after.
	Registry Registry
	// Overrides: a failure replaces even a result (resources/subscribe,
	// whose mcp-go handler always succeeds: the shell refuses in a hook).
	Overrides bool
	// List is how the entries of a list answer are replaced by a
	// source's own text (ListEntries); nil: mcp-go's entries stay.
	List *ListEntries
	// Conversation is the conversation id the client sent in the call's
	// _meta (ConversationMetaKey), "" when none or unusable.
	Conversation string

	// task is a tools/call's params.task (2025-11-25's task request), meta
	// its params._meta (where a 2026-07-28 client declares the tasks
	// extension), for AnswerTask.
	task, meta json.RawMessage
	// answers and state are a 2026-07-28 retry's inputResponses and
	// requestState (an approval's answer), for a call made a task after
	// its approval.
	answers, state json.RawMessage

	// events counts the SSE events written on the request's own answer
	// (Writer), for mcpPeer.settle on a request without a session.
	events atomic.Int64

	direct bool // plain enough to be answered without mcp-go
	// sessionless is the protocol version of a direct call on the
	// sessionless protocol (2026-07-28 and later); "" on a session.
	sessionless string

	mu       sync.Mutex
	err      *pipeline.Error
	upstream json.RawMessage // the upstream's own result of a forwarded request
	whole    bool            // upstream is the whole result (PassResult), not merged with mcp-go's
	// cacheHint is the hints of a resources/read result (ReadCacheHints).
	cacheHint *pipeline.CacheHint
}

// Fail records the request's failure: the Writer writes it in place of
// mcp-go's answer.
func (c *Call) Fail(e *pipeline.Error) {
	c.mu.Lock()
	c.err = e
	c.mu.Unlock()
}

// Failure is the failure recorded, or nil.
func (c *Call) Failure() *pipeline.Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

type callKey struct{}

// CallFrom is the Call of ctx's request, or nil.
func CallFrom(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

// WithCall is ctx carrying c.
func WithCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}
