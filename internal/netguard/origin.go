package netguard

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// StayOnOrigin is an http.Client's CheckRedirect for every request that
// carries something of the gateway's (a source's credential, a token
// request's client secret, a document fetch, the headers of `caddy mcp
// call`): a redirect is followed only within the origin of the first
// request; one elsewhere is answered as the 3xx it is. Go's client drops
// Authorization and Cookie on a redirect to another domain, but not an API
// key header, a query key or a re-posted body, and it counts another port
// of the same host as the same domain.
func StayOnOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if !SameOrigin(req.URL, via[0].URL) {
		return http.ErrUseLastResponse
	}
	return nil
}

// SameOrigin reports whether a and b have one scheme, host and port.
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}
