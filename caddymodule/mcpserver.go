package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
)

const defaultSessionIdleTimeout = 30 * time.Minute

// toolsPageSize is how many tools one tools/list page holds: a registry
// with thousands of tools (large OpenAPI documents, MCP sources) is listed
// a page at a time, with nextCursor.
const toolsPageSize = 500

// newMCPServer registers every tool of the engine with an mcp-go server and
// wraps it in the streamable HTTP transport.
func (h *Handler) newMCPServer(ctx caddy.Context) (*server.MCPServer, *server.StreamableHTTPServer) {
	opts := append([]server.ServerOption{
		server.WithToolCapabilities(true), // sources may change their tools (registry.go)
		server.WithLogging(),
		server.WithRecovery(),
		server.WithToolFilter(h.toolFilter), // auth_http.go
		server.WithPaginationLimit(toolsPageSize),
		server.WithToolHandlerMiddleware(withRoundTrip), // approval.go
	}, h.resourcePromptOptions()...) // resources_serve.go
	hooks := &server.Hooks{}
	h.resources.Hooks(hooks, catchAllTemplate)
	h.subscribeHooks(hooks)   // subscribe.go
	h.instructionHooks(hooks) // upstream_catalog.go
	h.clientSessions = &clientSessions{}
	h.clientSessions.hooks(hooks) // direct_peer.go
	opts = append(opts, server.WithHooks(hooks))
	srv := server.NewMCPServer(h.ServerName, h.ServerVersion, opts...)
	srv.AddTools(h.serverTools(h.tools())...)
	h.addResourcesAndPrompts(srv)

	idle := h.sessionIdleTimeout()
	// Signed session ids (sessionid.go), held by the handler so the direct
	// path (direct.go) validates them exactly as mcp-go does. mcp-go's own
	// DNS-rebinding check (loopback listeners only) gives way to the gate
	// every request has passed before reaching it (gate.go).
	streamable := server.NewStreamableHTTPServer(srv,
		server.WithSessionIdManagerResolver(sessionResolver{h.sessionIDs}),
		server.WithDisableLocalhostProtection(true),
		server.WithSessionIdleTTL(idle),
		server.WithStreamableHTTPLogger(ctx.Slogger()),
	)
	return srv, streamable
}

// sessionIdleTimeout is session_idle_timeout or its default.
func (h *Handler) sessionIdleTimeout() time.Duration {
	if h.SessionIdleTimeout == 0 {
		return defaultSessionIdleTimeout
	}
	return time.Duration(h.SessionIdleTimeout)
}

// mcpTool is the tools/list entry of a compiled tool.
func mcpTool(t *pipeline.Tool) mcp.Tool {
	a := t.Annotations
	return mcp.Tool{
		Name:            t.Name,
		Title:           t.Title,
		Description:     t.Description,
		RawInputSchema:  t.Schema(),
		RawOutputSchema: t.OutputSchema,
		Annotations: mcp.ToolAnnotation{
			Title:           t.Title,
			ReadOnlyHint:    a.ReadOnly,
			DestructiveHint: a.Destructive,
			IdempotentHint:  a.Idempotent,
			OpenWorldHint:   a.OpenWorld,
		},
	}
}

// toolEntry is the tools/list entry of a compiled tool: its own Listing
// with the gateway's name and input schema spliced in (passthrough.go),
// else mcp-go's encoding of mcpTool.
func toolEntry(t *pipeline.Tool) (json.RawMessage, error) {
	if t.Listing == nil {
		return json.Marshal(mcpTool(t))
	}
	name, err := json.Marshal(t.Name)
	if err != nil {
		return nil, err
	}
	out, err := withJSONMember(t.Listing, "name", name)
	if err != nil {
		return nil, err
	}
	return withJSONMember(out, "inputSchema", t.Schema())
}

// toolHandler is the mcp-go handler of one tool. A pipeline failure is
// recorded on the request's call state, where the response writer (wire.go)
// turns mcp-go's generic -32603 into the documented code.
func (h *Handler) toolHandler(name string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, settle := withPeer(ctx, req, h.clientSessions) // forward.go
		defer settle()
		st := callStateFrom(ctx)
		args := req.GetArguments()
		if st != nil && st.name == req.Params.Name && st.args != nil {
			// Arguments decoded with UseNumber: integers beyond 2^53 stay exact.
			args = st.args
		}
		out, perr := h.runTool(ctx, name, args, requestInfo(ctx, st))
		if perr != nil {
			if st != nil {
				st.fail(perr)
			}
			return nil, perr
		}
		return out, nil
	}
}

// runTool runs the pipeline for one call and shapes the outcome: an MCP
// result, or the pipeline error; in error_mode result a failure is an
// isError result instead. With error_detail safe, a database's own error
// text is replaced by its code and the request id after the call is logged
// (the debug line keeps the full text).
func (h *Handler) runTool(ctx context.Context, name string, args map[string]any, info *pipeline.RequestInfo) (*mcp.CallToolResult, *pipeline.Error) {
	out, _, perr := h.callTool(ctx, name, args, info, false)
	return out, perr
}

// callTool is runTool for a caller that can write a result's bytes
// (the direct path): with raw set, a Canonical or Encoded result comes
// back as those bytes (rawOut, _meta added) instead of decoded into out.
func (h *Handler) callTool(ctx context.Context, name string, args map[string]any, info *pipeline.RequestInfo, raw bool) (out *mcp.CallToolResult, rawOut json.RawMessage, perr *pipeline.Error) {
	ctx, rec := h.startCall(ctx, name)
	res, perr := h.tools().engine.Call(ctx, name, args, info)
	if perr == nil {
		if raw {
			res = encodedValueResult(res)
		}
		if raw && (res.Canonical || res.Encoded != nil) {
			rawOut, perr = h.respondRaw(ctx, rec, res, info.ProtocolVersion)
		}
		if rawOut == nil && perr == nil {
			out, perr = respond(ctx, rec, res, info.ProtocolVersion)
		}
	}
	rec.Finish(ctx, perr)
	if perr == nil {
		return out, rawOut, nil
	}
	if h.ErrorDetail != errorDetailFull {
		perr = perr.WithoutServerText(telemetry.RequestID(ctx))
	}
	if h.ErrorMode == errorModeResult {
		res := mcp.NewToolResultError(perr.Error())
		var me pipeline.MetaError
		if errors.As(perr, &me) {
			addMeta(res, me.ErrorMeta())
		}
		return res, nil, nil
	}
	return nil, nil, perr
}

func requestInfo(ctx context.Context, st *callState) *pipeline.RequestInfo {
	info := &pipeline.RequestInfo{ProtocolVersion: protocolVersion(ctx, st)}
	if st != nil {
		info.Header, info.RemoteAddr, info.TLS = st.header, st.remoteAddr, st.tls
	}
	return info
}

// structuredSince is the first protocol version with structuredContent.
const structuredSince = "2025-06-18"

// encodeResult is the response stage (docs/architecture.md, Stages): the result as JSON
// in one text block, plus structuredContent {"results": ...} for clients
// that understand it. A native MCP result is passed through unchanged.
func encodeResult(res *pipeline.Result, version string) (*mcp.CallToolResult, *pipeline.Error) {
	if res.Native != nil {
		var out mcp.CallToolResult
		if err := json.Unmarshal(res.Native, &out); err != nil {
			return nil, pipeline.Fail(pipeline.StageResponse, err, "tool returned an invalid MCP result")
		}
		if res.Meta != nil {
			addMeta(&out, res.Meta)
		}
		return &out, nil
	}
	text, err := json.Marshal(res.Value)
	if err != nil {
		return nil, pipeline.Fail(pipeline.StageResponse, err, "result is not JSON-encodable")
	}
	out := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(text))}}
	if version >= structuredSince {
		out.StructuredContent = map[string]json.RawMessage{"results": text}
	}
	if res.Meta != nil {
		addMeta(out, res.Meta)
	}
	return out, nil
}

// canonicalNative re-encodes a Native result as the gateway writes it
// (mcp-go's encoding of the decoded result), for the result cache to store
// once (pipeline.Result.Canonical). A result with a _meta of its own is
// left as it is: adding the gateway's _meta to it means merging the two.
func canonicalNative(native json.RawMessage) (json.RawMessage, bool) {
	var out mcp.CallToolResult
	if json.Unmarshal(native, &out) != nil || out.Meta != nil {
		return nil, false
	}
	b, err := json.Marshal(&out)
	return b, err == nil
}

// encodeCanonical is encodeResult for a Canonical result, or an Encoded
// one (encodedFor; nil, nil when it cannot be used: encodeResult then
// encodes its Value): its bytes with the result's _meta, which sorts
// before every other key of mcp-go's encoding (a map's keys are written
// in order, and "_" < "a"), put first.
func encodeCanonical(res *pipeline.Result, version string, server *mcp.Implementation) (json.RawMessage, *pipeline.Error) {
	if mcp.IsModernProtocol(version) {
		return encodeModern(res, server)
	}
	b := res.Native
	if !res.Canonical {
		if b = encodedFor(res, version); b == nil {
			return nil, nil
		}
	}
	return withMeta(b, res.Meta)
}

// withMeta is b, an encoded result without _meta, with meta (if any) as its
// _meta.
func withMeta(b json.RawMessage, meta map[string]any) (json.RawMessage, *pipeline.Error) {
	if meta == nil {
		return b, nil
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, pipeline.Fail(pipeline.StageResponse, nil, "tool returned an invalid MCP result")
	}
	m, err := json.Marshal(&mcp.Meta{AdditionalFields: meta})
	if err != nil {
		return nil, pipeline.Fail(pipeline.StageResponse, err, "result metadata is not JSON-encodable")
	}
	out := make([]byte, 0, len(b)+len(m)+10)
	out = append(append(append(out, `{"_meta":`...), m...), ',')
	if rest := b[1:]; len(rest) > 0 && rest[0] == '}' {
		out = out[:len(out)-1] // no other key
		return append(out, rest...), nil
	}
	return append(out, b[1:]...), nil
}

// protocolVersion is the client's MCP protocol version: the one negotiated
// on this session, else the MCP-Protocol-Version header (a session that
// began before a config reload is unknown to the new server).
func protocolVersion(ctx context.Context, st *callState) string {
	if v := server.RequestProtocolVersion(ctx); v != "" {
		return v
	}
	if st != nil {
		return st.header.Get("Mcp-Protocol-Version")
	}
	return ""
}
