// Package upstream is what every HTTP source shares (README, Sources): the
// credentials the gateway injects, a client that keeps them on their
// origin, retries with backoff for idempotent requests, a circuit breaker
// per source, and upstream failures as errors a caller may see.
package upstream

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Credential is what the gateway adds to every request of a source. The
// caller never sees it and can never set what it sets (Reserves).
type Credential interface {
	// Apply adds the credential to req; call is the tool call, for
	// credentials that depend on the caller.
	Apply(ctx context.Context, req *http.Request, call *pipeline.Call) error
	// Reserves names the headers, query keys and cookies it sets.
	Reserves() Reserved
}

// Reserved are the request parts only the gateway may set.
type Reserved struct {
	Headers, Query, Cookies []string
}

func (r *Reserved) add(o Reserved) {
	r.Headers = append(r.Headers, o.Headers...)
	r.Query = append(r.Query, o.Query...)
	r.Cookies = append(r.Cookies, o.Cookies...)
}

// Add adds o's names to r.
func (r *Reserved) Add(o Reserved) { r.add(o) }

// Bearer sends "Authorization: Bearer <token>".
type Bearer struct{ Token string }

func (b Bearer) Apply(_ context.Context, req *http.Request, _ *pipeline.Call) error {
	req.Header.Set("Authorization", "Bearer "+b.Token)
	return nil
}
func (Bearer) Reserves() Reserved { return Reserved{Headers: []string{"Authorization"}} }

// Basic sends HTTP basic authentication.
type Basic struct{ User, Password string }

func (b Basic) Apply(_ context.Context, req *http.Request, _ *pipeline.Call) error {
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(b.User+":"+b.Password)))
	return nil
}
func (Basic) Reserves() Reserved { return Reserved{Headers: []string{"Authorization"}} }

// APIKey sends a key in a header, a query parameter or a cookie.
type APIKey struct {
	In    string // "header", "query" or "cookie"
	Name  string
	Value string
}

func (k APIKey) Apply(_ context.Context, req *http.Request, _ *pipeline.Call) error {
	switch k.In {
	case "header":
		req.Header.Set(k.Name, k.Value)
	case "query":
		q := req.URL.Query()
		q.Set(k.Name, k.Value)
		req.URL.RawQuery = q.Encode()
	case "cookie":
		// Drop any pair of that name first: servers read the first one, so
		// a caller's cookie must not come before the gateway's. Names are
		// compared as cookie parsers read them, trimmed: "sid =x" is a
		// "sid" cookie to them.
		var kept []string
		for _, pair := range strings.Split(req.Header.Get("Cookie"), ";") {
			name, _, _ := strings.Cut(pair, "=")
			if pair = strings.TrimSpace(pair); pair != "" && strings.TrimSpace(name) != k.Name {
				kept = append(kept, pair)
			}
		}
		req.Header.Del("Cookie")
		if len(kept) > 0 {
			req.Header.Set("Cookie", strings.Join(kept, "; "))
		}
		req.AddCookie(&http.Cookie{Name: k.Name, Value: k.Value})
	default:
		return fmt.Errorf("api_key: unknown location %q", k.In)
	}
	return nil
}

func (k APIKey) Reserves() Reserved {
	switch k.In {
	case "header":
		return Reserved{Headers: []string{k.Name}}
	case "query":
		return Reserved{Query: []string{k.Name}}
	}
	return Reserved{Cookies: []string{k.Name}}
}

// Header is a static header the operator sets on every request.
type Header struct{ Name, Value string }

func (h Header) Apply(_ context.Context, req *http.Request, _ *pipeline.Call) error {
	req.Header.Set(h.Name, h.Value)
	return nil
}
func (h Header) Reserves() Reserved { return Reserved{Headers: []string{h.Name}} }

// Passthrough forwards the caller's own "Authorization: Bearer" header,
// for upstreams that accept the same tokens as the gateway. A call without
// one fails: sending nothing would be calling upstream as nobody.
type Passthrough struct{}

func (Passthrough) Apply(_ context.Context, req *http.Request, call *pipeline.Call) error {
	var h string
	if call != nil && call.Request != nil {
		h = call.Request.Header.Get("Authorization")
	}
	if scheme, token, ok := strings.Cut(h, " "); !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return &pipeline.PublicError{Public: "credential passthrough: the call carries no bearer token"}
	}
	req.Header.Set("Authorization", h)
	return nil
}
func (Passthrough) Reserves() Reserved { return Reserved{Headers: []string{"Authorization"}} }
