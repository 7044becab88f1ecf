package caddymodule

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/caddymodule/access"
	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
)

// requestAccess is what the feature packages (resources.Set and the
// others) learn of the request being served, through their Access
// interfaces: its caller's auth, its call state, its request info. The
// call state of a read, get or completion is made by inspectRead.
type requestAccess struct{ h *Handler }

// Allowed reports whether the caller of ctx passes auth (nil: anyone), the
// check the tool filter makes (access.Allowed).
func (a requestAccess) Allowed(ctx context.Context, auth pipeline.Authorizer, name string) bool {
	return access.Allowed(ctx, auth, name)
}

// Fail puts perr on the request's call state, whose writer answers it.
func (requestAccess) Fail(ctx context.Context, perr *pipeline.Error) {
	if st := fastpath.CallFrom(ctx); st != nil {
		st.Fail(perr)
	}
}

// RequestInfo is what the pipeline's stages know of the request.
func (requestAccess) RequestInfo(ctx context.Context) *pipeline.RequestInfo {
	return fastpath.RequestInfo(ctx, fastpath.CallFrom(ctx))
}

// Shown is perr as error_detail lets the client see it.
func (a requestAccess) Shown(ctx context.Context, perr *pipeline.Error) *pipeline.Error {
	if a.h.ErrorDetail != errorDetailFull {
		return perr.WithoutServerText(telemetry.RequestID(ctx))
	}
	return perr
}

// PassUpstream has raw, the upstream's own result of the request, written
// in place of mcp-go's encoding of it.
func (requestAccess) PassUpstream(ctx context.Context, raw json.RawMessage) {
	if st := fastpath.CallFrom(ctx); st != nil {
		st.PassUpstream(raw)
	}
}

// CacheHint records the ttlMs and cacheScope of a resources/read answer
// (fastpath.ReadCacheHints).
func (requestAccess) CacheHint(ctx context.Context, h *pipeline.CacheHint) {
	if st := fastpath.CallFrom(ctx); st != nil {
		st.SetCacheHint(h)
	}
}

// Caller gives a source the caller the endpoint verified (default_auth)
// and the request's headers: a source with an upstream session per caller
// sends the request on that caller's session, with the caller's
// credentials (sources/mcp, session per_caller).
func (requestAccess) Caller(ctx context.Context) context.Context {
	id := access.Identity(ctx)
	if id == nil {
		return ctx
	}
	return pipeline.WithRequestCaller(ctx, &pipeline.Call{Identity: id, Request: access.RequestInfo(ctx)})
}

// inspectRead notes a resources/read, prompts/get, completion/complete,
// resources/subscribe or resources/unsubscribe, so that the handler's (or
// hook's) failure reaches the wire with its own code, and a forwarded
// request its upstream's own result (fastpath.Writer rewrites mcp-go's answer for
// that id); and a list whose entries include a source's own
// (fastpath.ListEntries). Nil for anything else.
func (h *Handler) inspectRead(body []byte, r *http.Request) *fastpath.Call {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 {
		return nil
	}
	st := &fastpath.Call{Header: r.Header, RemoteAddr: r.RemoteAddr, TLS: r.TLS, RawID: msg.ID}
	switch mcp.MCPMethod(msg.Method) {
	case mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe:
		st.Overrides = true
	case mcp.MethodResourcesRead, mcp.MethodPromptsGet, mcp.MethodCompletionComplete:
	case mcp.MethodToolsList, mcp.MethodResourcesList, mcp.MethodResourcesTemplatesList, mcp.MethodPromptsList:
		if h.passOnList(st, msg.Method); st.List == nil {
			return nil
		}
	default:
		return nil
	}
	st.ID = jsonrpc.DecodeID(msg.ID)
	return st
}
