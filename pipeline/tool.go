package pipeline

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"time"
)

// ToolNamePattern is the strictest rule common MCP clients apply to tool
// names; every name that leaves the gateway matches it.
var ToolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Tool is a compiled tool: what tools/list publishes and what tools/call
// runs. The same model serves tools declared in the Caddyfile (Inputs set,
// schema built from them) and tools discovered from a source (InputSchema
// set verbatim, Inputs nil, results passed through).
type Tool struct {
	Name        string
	Title       string
	Description string

	// Inputs are the declared inputs; nil for tools with a raw schema.
	Inputs *InputSet
	// InputSchema, when set, is published as is (proxied tools).
	InputSchema json.RawMessage
	// OutputSchema, when set, is published as the tool's outputSchema: the
	// JSON Schema of the object its results carry as structuredContent.
	OutputSchema json.RawMessage
	// Aliases are other names tools/call accepts for the tool (a source's
	// original operation names).
	Aliases []string
	// Original is a source tool's name in its source (an operationId, a
	// GraphQL field, an upstream MCP tool's name); the gateway accepts it,
	// and <source>.<original> and <source>/<original>, as aliases.
	Original string
	// Annotations are the MCP behaviour hints.
	Annotations Annotations
	// Listing, when set, is the tool's tools/list entry as its origin
	// wrote it (a proxied MCP tool: every field its server sent, those the
	// gateway does not model too). The gateway publishes it as it is, with
	// the tool's Name and input schema (Schema) in place of the origin's.
	Listing json.RawMessage

	// Stage hooks; a nil hook is a stage that passes through unchanged.
	Auth         Authorizer
	InputMapper  Transformer
	OutputMapper Transformer
	// Approval asks a person before the tool runs (Approver); a tool
	// with one is Interactive.
	Approval Approver
	// Executor runs the execution stage. Required.
	Executor Executor
	// Source names the origin for operators (connector or source name).
	Source string
	// Interactive tools talk to the client while they run (progress,
	// logging, elicitation) and so need the MCP session; others may be
	// answered directly by the transport.
	Interactive bool
	// Cache is the tool's result cache policy; nil when not cached.
	Cache *CachePolicy
	// FromIdentity lists what of the verified caller reaches the
	// statement ({{ auth.subject }}, {{ auth.claims.x }}, a connector's
	// claims_setting or role_claim): such a tool needs an auth provider
	// and its results differ per caller. Empty for other tools.
	FromIdentity []string
	// Tasks is how the tool runs as a task (docs/tasks.md).
	Tasks TaskSupport
	// TaskTTL is how long a gateway task of the tool and its outcome are
	// kept, counted from its creation; it also bounds the call.
	TaskTTL time.Duration
	// TaskPassthrough says the task is the upstream's: the executor, given
	// a Call with Task set, asks its upstream for a task and returns the
	// handle (Result.Task). Otherwise a task is the gateway's own, which
	// runs the call in the background (pipeline/tasks).
	TaskPassthrough bool
}

// Annotations are MCP tool annotations; nil means "not stated".
type Annotations struct {
	ReadOnly    *bool
	Destructive *bool
	Idempotent  *bool
	OpenWorld   *bool
}

// TalksBack reports whether a call of the tool needs the client while it
// runs: an interactive tool, or one that asks for approval first. Such a
// call needs the MCP session; others may be answered directly.
func (t *Tool) TalksBack() bool { return t.Interactive || t.Approval != nil }

// Schema is the input schema published for the tool.
func (t *Tool) Schema() json.RawMessage {
	if len(t.InputSchema) > 0 {
		return t.InputSchema
	}
	if t.Inputs == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return t.Inputs.JSONSchema()
}

// Check reports configuration mistakes in a tool before it is served.
func (t *Tool) Check() error {
	if !ToolNamePattern.MatchString(t.Name) {
		return fmt.Errorf("tool %q: name must match %s", t.Name, ToolNamePattern)
	}
	if t.Executor == nil {
		return fmt.Errorf("tool %q: nothing to execute", t.Name)
	}
	return nil
}

// Executor runs the execution stage of a tool.
type Executor interface {
	Execute(ctx context.Context, call *Call) (*Result, error)
}

// ExecutorFunc is a function used as an Executor.
type ExecutorFunc func(ctx context.Context, call *Call) (*Result, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, call *Call) (*Result, error) { return f(ctx, call) }

// Authorizer is the authentication stage of a tool: it returns the caller's
// identity or an error that stops the call.
type Authorizer interface {
	Authorize(ctx context.Context, call *Call) (*Identity, error)
}

// Transformer is a mapper script: it receives the payload
// ({inputs|results, tool, auth}; docs/architecture.md, Stages) and returns the replacement value.
type Transformer interface {
	Transform(ctx context.Context, payload map[string]any) (any, error)
}

// Identity is who an auth provider says the caller is.
type Identity struct {
	// Provider is the name of the auth provider that verified the caller
	// (the name in `auth <name> <plugin>`); AuthCheck sets it.
	Provider string
	Subject  string
	Claims   map[string]any
}

// RequestInfo is what the HTTP layer knows about the caller.
type RequestInfo struct {
	Header     http.Header
	RemoteAddr string
	TLS        *tls.ConnectionState
	// ProtocolVersion is the MCP protocol version the client speaks.
	ProtocolVersion string
	// Session is the call's MCP session id, "" on a protocol without
	// sessions (2026-07-28); Conversation is the conversation id such a
	// client sent in the call's _meta, "" when none. Guardrails across
	// calls (Sequencer) key their record on them.
	Session      string
	Conversation string
}

// Call is one tools/call as it moves through the stages.
type Call struct {
	Tool     *Tool
	Inputs   map[string]any
	Identity *Identity
	Request  *RequestInfo
	// CacheStatus is set by the result cache: "hit", "miss", "stale", or
	// "" when the call was not cached.
	CacheStatus string
	// Task is set when the call is to become an upstream's task
	// (Tool.TaskPassthrough): the client's task request, forwarded.
	Task *TaskRequest
}

// Result is what a tool produced. Value is encoded as the MCP text block and
// structuredContent; Native, when set, is a complete MCP CallToolResult
// (proxied MCP tools, handlers returning {content: [...]}) passed through
// unchanged.
type Result struct {
	Value  any
	Native json.RawMessage
	// Canonical says Native is already encoded exactly as the gateway
	// writes a result (mcp-go's encoding), with no _meta of its own: the
	// gateway may write those bytes as they are instead of decoding and
	// encoding them again (the result cache canonicalizes what it stores).
	Canonical bool
	// Verbatim says Native is an MCP server's own result of a forwarded
	// tools/call, as it sent it: a JSON object on one line (an SSE event's
	// data may hold it), with whatever _meta and fields the server wrote.
	// Where no stage needs it decoded, the gateway may write it as it is,
	// the result's Meta merged into its _meta, instead of decoding it into
	// mcp-go's types and encoding it again, which costs a proxied call
	// more than the rest of its answer and drops the fields mcp-go does not
	// model. A stage that changes the result makes a new one without it.
	Verbatim bool
	// Encoded, when set with Value, is the whole result already encoded as
	// the gateway writes it to clients with structuredContent, Value's
	// bytes (a json.RawMessage) held in it verbatim: the result cache
	// encodes a stored Value once (cache.Config.Encode), so that a hit is
	// written instead of encoded again. An output mapper's result has none.
	Encoded json.RawMessage
	// Meta, when set, is added to the result's _meta (e.g. a stale cache
	// serve says so there).
	Meta map[string]any
	// NoStore and MaxAge are what the backend says about caching this
	// result (an HTTP upstream's Cache-Control, when the source respects
	// it): NoStore keeps it out of the cache, a positive MaxAge shortens
	// the tool's TTL for it.
	NoStore bool
	MaxAge  time.Duration
	// Task, when set, is the handle of the task the call became (an
	// upstream's, Call.Task): the client gets it in place of a result.
	Task *Task
	// CacheHint is what the result cache says of this result, for the
	// ttlMs and cacheScope a client may cache it by (pipeline/cache); nil
	// when the result was not cached.
	CacheHint *CacheHint
}
