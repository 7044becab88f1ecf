package pipeline

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// AuthProvider is an authentication plugin (docs/architecture.md, Stages): it looks at
// the request and says who the caller is. The Caddy glue loads providers as
// guest modules in the namespace mcp.auth, so a third party adds one by
// implementing this interface on a caddy.Module (and, for the Caddyfile,
// caddyfile.Unmarshaler) and building with `xcaddy --with`.
//
// Authenticate returns the identity, or an error: an *AuthError when the
// credentials are missing or wrong (the caller's fault, answered 401 or
// -32000), anything else when the provider could not decide (an identity
// provider that does not answer, answered 503 or -32000). Error messages
// must never contain the credential.
type AuthProvider interface {
	Authenticate(ctx context.Context, req *AuthRequest) (*Identity, error)
}

// AuthRequest is what a provider may look at. Tool is empty at the endpoint
// layer (every request to the endpoint) and names the tool at the tool layer.
type AuthRequest struct {
	Header     http.Header
	RemoteAddr string
	TLS        *tls.ConnectionState
	Tool       string
}

// AuthError is a refusal caused by the credentials themselves.
type AuthError struct {
	// Missing is true when no credential for this provider was presented.
	Missing bool
	// Reason names the failed check ("token expired", "unknown key"); it is
	// shown to the caller, so it never holds the credential.
	Reason string
}

func (e *AuthError) Error() string {
	if e.Missing {
		return "credentials required"
	}
	return "invalid credentials: " + e.Reason
}

// SafeMessage makes an AuthError a SafeError: its text is written to be shown.
func (e *AuthError) SafeMessage() string { return e.Error() }

// NoCredentials is the error of a request that carries no credential.
func NoCredentials() error { return &AuthError{Missing: true} }

// InvalidCredentials is the error of a credential that failed a check.
func InvalidCredentials(format string, args ...any) error {
	return &AuthError{Reason: fmt.Sprintf(format, args...)}
}

// Policy is what a tool (or the endpoint) asks of an authenticated caller.
// Every part that is set must hold: all Scopes, each Claims entry (the claim
// equals one of the values, or is a list holding one of them), and a
// Subject among Subjects.
type Policy struct {
	Scopes   []string
	Claims   map[string][]string
	Subjects []string
}

// PolicyError says which part of a policy failed. Its Detail (the missing
// scope, the claim) is for debug logs and for the endpoint's
// WWW-Authenticate scope hint; a tool caller sees only a uniform message.
type PolicyError struct {
	Check  string // "scope", "claim" or "subject"
	Detail string
}

func (e *PolicyError) Error() string { return e.Check + " check failed: " + e.Detail }

// Check reports the first part of the policy the identity fails, or nil.
func (p *Policy) Check(id *Identity) error {
	if p == nil {
		return nil
	}
	if id == nil {
		return &PolicyError{Check: "identity", Detail: "no identity"}
	}
	if len(p.Scopes) > 0 {
		have := id.Scopes()
		for _, s := range p.Scopes {
			if !slices.Contains(have, s) {
				return &PolicyError{Check: "scope", Detail: "missing scope " + s}
			}
		}
	}
	for _, name := range sortedKeys(p.Claims) {
		if !claimMatches(id.Claims[name], p.Claims[name]) {
			return &PolicyError{Check: "claim", Detail: "claim " + name + " not allowed"}
		}
	}
	if len(p.Subjects) > 0 && !slices.Contains(p.Subjects, id.Subject) {
		return &PolicyError{Check: "subject", Detail: "subject not allowed"}
	}
	return nil
}

// Scopes are the identity's OAuth scopes: the "scope" claim (a
// space-separated string, RFC 8693) or the "scp" claim (a list, as several
// identity providers issue it).
func (id *Identity) Scopes() []string {
	var out []string
	for _, key := range []string{"scope", "scp"} {
		switch v := id.Claims[key].(type) {
		case string:
			out = append(out, strings.Fields(v)...)
		case []string:
			out = append(out, v...)
		case []any:
			for _, s := range v {
				if str, ok := s.(string); ok {
					out = append(out, str)
				}
			}
		}
	}
	return out
}

func claimMatches(v any, allowed []string) bool {
	switch c := v.(type) {
	case nil:
		return false
	case []any:
		for _, e := range c {
			if claimMatches(e, allowed) {
				return true
			}
		}
		return false
	case []string:
		return slices.ContainsFunc(c, func(s string) bool { return slices.Contains(allowed, s) })
	case string:
		return slices.Contains(allowed, c)
	default:
		// Numbers and booleans compare by their JSON text ("true", "42").
		return slices.Contains(allowed, fmt.Sprint(c))
	}
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// AuthCheck is the authentication stage of one tool: a provider and the
// policy the identity must satisfy. It implements Authorizer.
type AuthCheck struct {
	ProviderName string
	Provider     AuthProvider
	Policy       *Policy
}

// Messages a tool caller sees for a refused call. A policy failure is
// reported the same way whatever the policy says, so that a caller learns
// nothing about the policy of a tool it may not use.
const (
	msgNotPermitted = "not permitted to call this tool"
	msgUnavailable  = "authentication unavailable, try again later"
)

// Authorize authenticates the caller (once per request and provider, see
// WithAuthMemo) and checks the policy.
func (a *AuthCheck) Authorize(ctx context.Context, call *Call) (*Identity, error) {
	id, err := a.Identify(ctx, call.Request, call.Tool.Name)
	if err != nil {
		var ae *AuthError
		if errors.As(err, &ae) {
			return nil, Fail(StageAuth, err, "%s", ae.SafeMessage())
		}
		return nil, Fail(StageAuth, err, msgUnavailable)
	}
	if err := a.Policy.Check(id); err != nil {
		return nil, Fail(StageAuth, err, msgNotPermitted)
	}
	return id, nil
}

// Allows reports whether the caller may call the tool; it is the tools/list
// filter and runs exactly the checks of Authorize.
func (a *AuthCheck) Allows(ctx context.Context, req *RequestInfo, tool string) bool {
	id, err := a.Identify(ctx, req, tool)
	return err == nil && a.Policy.Check(id) == nil
}

// Identify runs the provider, reusing a result already computed for this
// request (the endpoint layer's, or another tool's during tools/list).
func (a *AuthCheck) Identify(ctx context.Context, req *RequestInfo, tool string) (*Identity, error) {
	memo, _ := ctx.Value(authMemoKey{}).(*authMemo)
	key := a.ProviderName
	if pt, ok := a.Provider.(PerToolProvider); ok && pt.PerTool() {
		key += "\x00" + tool
	}
	if memo != nil {
		if r, ok := memo.get(key); ok {
			return r.id, r.err
		}
	}
	ar := &AuthRequest{Tool: tool}
	if req != nil {
		ar.Header, ar.RemoteAddr, ar.TLS = req.Header, req.RemoteAddr, req.TLS
	}
	id, err := a.Provider.Authenticate(ctx, ar)
	if err == nil && id == nil {
		err = errors.New("auth provider returned neither identity nor error")
	}
	if id != nil && id.Provider != a.ProviderName {
		// A copy: the provider may hand out an identity it keeps.
		named := *id
		named.Provider = a.ProviderName
		id = &named
	}
	if memo != nil {
		memo.put(key, id, err)
	}
	return id, err
}

// PerToolProvider is implemented by providers whose answer depends on the
// tool (AuthRequest.Tool), such as a script deciding per tool; their answers
// are remembered per tool instead of per request.
type PerToolProvider interface {
	PerTool() bool
}

// authMemo remembers each provider's answer for one HTTP request, so a
// token is verified once per request however many checks use it.
type authMemo struct {
	mu      sync.Mutex
	results map[string]authResult
}

type authResult struct {
	id  *Identity
	err error
}

type authMemoKey struct{}

// WithAuthMemo returns a context in which provider answers are remembered
// for the rest of the request.
func WithAuthMemo(ctx context.Context) context.Context {
	if _, ok := ctx.Value(authMemoKey{}).(*authMemo); ok {
		return ctx
	}
	return context.WithValue(ctx, authMemoKey{}, &authMemo{results: map[string]authResult{}})
}

func (m *authMemo) get(name string) (authResult, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.results[name]
	return r, ok
}

func (m *authMemo) put(name string, id *Identity, err error) {
	m.mu.Lock()
	m.results[name] = authResult{id: id, err: err}
	m.mu.Unlock()
}
