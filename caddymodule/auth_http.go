package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/pipeline"
)

// The endpoint layer of auth (default_auth): every request to the endpoint
// must carry valid credentials for the default provider, and satisfy the
// default policy, before mcp-go sees it. The answers follow the MCP
// authorization spec and RFC 6750 / RFC 9728:
//   - no or invalid credentials: 401, WWW-Authenticate: Bearer
//     resource_metadata="<metadata URL>" (+ error="invalid_token");
//   - valid credentials that fail the default policy: 403 (error=
//     "insufficient_scope" and the needed scope when a scope is missing);
//   - a provider that cannot decide (identity provider down): 503.

type authInfoKey struct{}

// authRequestInfo is what the tools/list filter knows about the caller.
func authRequestInfo(ctx context.Context) *pipeline.RequestInfo {
	info, _ := ctx.Value(authInfoKey{}).(*pipeline.RequestInfo)
	return info
}

// authenticateEndpoint runs the endpoint layer. It returns the request to
// go on with (its context remembers provider answers, so a token is
// verified once per request), or nil when it has answered the request
// itself (refusal or metadata document).
func (h *Handler) authenticateEndpoint(w http.ResponseWriter, r *http.Request) *http.Request {
	if len(h.providers) == 0 {
		return r
	}
	if h.metadata != nil && h.metadata.serve(w, r, "") {
		return nil
	}
	info := &pipeline.RequestInfo{Header: r.Header, RemoteAddr: r.RemoteAddr, TLS: r.TLS}
	ctx := context.WithValue(pipeline.WithAuthMemo(r.Context()), authInfoKey{}, info)
	r = r.WithContext(ctx)
	if h.defaultAuth == nil || r.Method == http.MethodOptions {
		// OPTIONS: a browser's CORS preflight carries no credentials.
		return r
	}
	id, err := h.defaultAuth.Identify(ctx, info, "")
	if err == nil {
		err = h.defaultAuth.Policy.Check(id)
		if err == nil {
			// The endpoint's rate limit counts per this identity.
			return r.WithContext(context.WithValue(ctx, endpointIdentityKey{}, id))
		}
	}
	// A browser opening the URL sends no credentials: it gets the catalog
	// page without tools, where the viewer can enter a credential. Not with
	// a scheme the browser itself asks for (Basic): there the 401 makes it
	// prompt, and it comes back with credentials.
	var ae *pipeline.AuthError
	_, prompts := h.defaultAuth.Provider.(Challenger)
	if errors.As(err, &ae) && ae.Missing && !prompts && h.serveCatalog(w, r, true) {
		return nil
	}
	h.refuseEndpoint(w, r, err)
	return nil
}

func (h *Handler) refuseEndpoint(w http.ResponseWriter, r *http.Request, err error) {
	challenge := fmt.Sprintf(`Bearer resource_metadata=%q`, h.metadata.metadataURL(r))
	if scopes := h.DefaultAuth.Scopes; len(scopes) > 0 {
		challenge += fmt.Sprintf(`, scope=%q`, strings.Join(scopes, " "))
	}
	var (
		ae     *pipeline.AuthError
		pe     *pipeline.PolicyError
		status int
		msg    string
	)
	switch {
	case errors.As(err, &ae) && ae.Missing:
		status, msg = http.StatusUnauthorized, ae.SafeMessage()
	case errors.As(err, &ae):
		status, msg = http.StatusUnauthorized, ae.SafeMessage()
		challenge += fmt.Sprintf(`, error="invalid_token", error_description=%q`, ae.Reason)
	case errors.As(err, &pe):
		status, msg = http.StatusForbidden, "not permitted"
		if pe.Check == "scope" {
			challenge += `, error="insufficient_scope"`
			msg = "insufficient scope"
		}
	default:
		status, msg = http.StatusServiceUnavailable, "authentication unavailable, try again later"
	}
	// The reason is safe to log (never the credential); so is the cause of
	// an unavailable provider (a fetch error names the IdP's URL, not a token).
	h.logger.Debug("mcp endpoint refused request", zap.String("provider", h.DefaultAuth.Use),
		zap.Int("status", status), zap.String("reason", err.Error()), zap.String("remote_addr", r.RemoteAddr))
	if status != http.StatusServiceUnavailable {
		if c, ok := h.defaultAuth.Provider.(Challenger); ok && status == http.StatusUnauthorized {
			w.Header().Add("WWW-Authenticate", c.Challenge())
		}
		w.Header().Add("WWW-Authenticate", challenge)
	} else {
		w.Header().Set("Retry-After", "5")
	}
	jsonrpc.WriteError(w, status, pipeline.CodeStageFailed, string(pipeline.StageAuth)+": "+msg)
}

// toolFilter shows a caller, in tools/list, only the tools it may call: the
// same provider and policy check as the auth stage. mcp-go also applies the
// filter to tools/call, where it would answer "tool not found"; calls are
// let through so the auth stage refuses them with the documented -32000.
//
// Aliases (serverTools) are never listed: each tool appears once, under
// its own name.
func (h *Handler) toolFilter(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	if fastpath.CallFrom(ctx) != nil {
		return tools
	}
	r := h.tools() // one version for the whole list
	if r.search != nil {
		return h.listSearch(ctx, r, tools) // discovery search (discovery.List)
	}
	engine := r.engine
	aliases := engine.Aliases()
	if len(h.providers) == 0 && len(aliases) == 0 {
		return tools
	}
	out := make([]mcp.Tool, 0, len(tools))
	for _, t := range tools {
		if _, alias := aliases[t.Name]; alias {
			continue
		}
		if pt := engine.Lookup(t.Name); pt != nil && h.callable(ctx, pt) {
			out = append(out, t)
		}
	}
	return out
}

// callable reports whether the caller of ctx passes t's auth check: the
// tools/list filter and the catalog page show only such tools. (The auth
// stage still runs on every call; listing is a convenience.)
func (h *Handler) callable(ctx context.Context, t *pipeline.Tool) bool {
	check, ok := t.Auth.(*pipeline.AuthCheck)
	if !ok {
		return true
	}
	info := authRequestInfo(ctx)
	return info != nil && check.Allows(ctx, info, t.Name)
}
