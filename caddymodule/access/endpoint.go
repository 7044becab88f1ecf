// Package access is the endpoint layer of auth (default_auth): every
// request to the endpoint must carry valid credentials for the default
// provider, and satisfy the default policy, before mcp-go sees it. The
// answers follow the MCP authorization spec and RFC 6750 / RFC 9728:
//   - no or invalid credentials: 401, WWW-Authenticate: Bearer
//     resource_metadata="<metadata URL>" (+ error="invalid_token");
//   - valid credentials that fail the default policy: 403 (error=
//     "insufficient_scope" and the needed scope when a scope is missing);
//   - a provider that cannot decide (identity provider down): 503.
//
// It also keeps, in the request's context, what the rest of the handler
// asks of the caller: the request info the providers read (RequestInfo)
// and the identity the endpoint verified (Identity).
package access

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/pipeline"
)

// Challenger is implemented by providers with an HTTP authentication scheme
// of their own (basic); its challenge is sent with the endpoint's 401
// besides the Bearer one that MCP clients read.
type Challenger interface {
	Challenge() string
}

// Options configure an Endpoint.
type Options struct {
	// Default is default_auth's provider and policy; nil without
	// default_auth (requests then only get their context).
	Default *pipeline.AuthCheck
	// Scopes are default_auth's scopes, named in the challenge.
	Scopes []string
	// ServeMetadata answers a request for the protected resource metadata
	// and reports whether it did; MetadataURL is the document's URL for r.
	ServeMetadata func(w http.ResponseWriter, r *http.Request) bool
	MetadataURL   func(r *http.Request) string
	// ServeLocked answers a browser that sent no credentials with the
	// catalog page without tools, and reports whether it did.
	ServeLocked func(w http.ResponseWriter, r *http.Request) bool
	Logger      *zap.Logger
}

// Endpoint runs the endpoint layer of one mcp handler. A nil Endpoint
// (no auth provider declared) lets every request through as it is.
type Endpoint struct{ opts Options }

// New returns the endpoint layer.
func New(opts Options) *Endpoint { return &Endpoint{opts: opts} }

type infoKey struct{}

type identityKey struct{}

// RequestInfo is what auth checks know about the caller of ctx; nil
// before Authenticate (or without auth).
func RequestInfo(ctx context.Context) *pipeline.RequestInfo {
	info, _ := ctx.Value(infoKey{}).(*pipeline.RequestInfo)
	return info
}

// Identity is the caller the endpoint verified; nil without default_auth.
func Identity(ctx context.Context) *pipeline.Identity {
	id, _ := ctx.Value(identityKey{}).(*pipeline.Identity)
	return id
}

// Allowed reports whether the caller of ctx passes auth (nil: anyone) for
// the tool name: what tools/list, the catalog and the lists show. (The
// auth stage still runs on every call; listing is a convenience.)
func Allowed(ctx context.Context, auth pipeline.Authorizer, name string) bool {
	check, ok := auth.(*pipeline.AuthCheck)
	if !ok {
		return true
	}
	info := RequestInfo(ctx)
	return info != nil && check.Allows(ctx, info, name)
}

// Authenticate runs the endpoint layer. It returns the request to go on
// with (its context remembers provider answers, so a token is verified
// once per request), or nil when it has answered the request itself
// (refusal or metadata document).
func (e *Endpoint) Authenticate(w http.ResponseWriter, r *http.Request) *http.Request {
	if e == nil {
		return r
	}
	if e.opts.ServeMetadata != nil && e.opts.ServeMetadata(w, r) {
		return nil
	}
	info := &pipeline.RequestInfo{Header: r.Header, RemoteAddr: r.RemoteAddr, TLS: r.TLS}
	ctx := context.WithValue(pipeline.WithAuthMemo(r.Context()), infoKey{}, info)
	r = r.WithContext(ctx)
	def := e.opts.Default
	if def == nil || r.Method == http.MethodOptions {
		// OPTIONS: a browser's CORS preflight carries no credentials.
		return r
	}
	id, err := def.Identify(ctx, info, "")
	if err == nil {
		err = def.Policy.Check(id)
		if err == nil {
			// The endpoint's rate limit and the session's owner use it.
			return r.WithContext(context.WithValue(ctx, identityKey{}, id))
		}
	}
	// A browser opening the URL sends no credentials: it gets the catalog
	// page without tools, where the viewer can enter a credential. Not with
	// a scheme the browser itself asks for (Basic): there the 401 makes it
	// prompt, and it comes back with credentials.
	var ae *pipeline.AuthError
	_, prompts := def.Provider.(Challenger)
	if errors.As(err, &ae) && ae.Missing && !prompts && e.opts.ServeLocked(w, r) {
		return nil
	}
	e.refuse(w, r, err)
	return nil
}

func (e *Endpoint) refuse(w http.ResponseWriter, r *http.Request, err error) {
	def := e.opts.Default
	challenge := fmt.Sprintf(`Bearer resource_metadata=%q`, e.opts.MetadataURL(r))
	if scopes := e.opts.Scopes; len(scopes) > 0 {
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
	e.opts.Logger.Debug("mcp endpoint refused request", zap.String("provider", def.ProviderName),
		zap.Int("status", status), zap.String("reason", err.Error()), zap.String("remote_addr", r.RemoteAddr))
	if status != http.StatusServiceUnavailable {
		if c, ok := def.Provider.(Challenger); ok && status == http.StatusUnauthorized {
			w.Header().Add("WWW-Authenticate", c.Challenge())
		}
		w.Header().Add("WWW-Authenticate", challenge)
	} else {
		w.Header().Set("Retry-After", "5")
	}
	jsonrpc.WriteError(w, status, pipeline.CodeStageFailed, string(pipeline.StageAuth)+": "+msg)
}
