package upstream

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Secrets are the credential values req carries once creds have been
// applied to it: each value of a header, query key or cookie a credential
// sets, the token of an "Authorization: <scheme> <token>" header, the
// password of a basic one, and the query-escaped form of each (an upstream
// that quotes its URL back shows that one). They are read from the request
// rather than from the credentials because per-caller, passthrough and
// OAuth2 credentials know their value only when the call is made.
func Secrets(req *http.Request, creds []Credential) []string {
	var out []string
	add := func(v string) {
		if v == "" || slices.Contains(out, v) {
			return
		}
		out = append(out, v)
		if q := url.QueryEscape(v); q != v {
			out = append(out, q)
		}
	}
	for _, c := range creds {
		r := c.Reserves()
		for _, name := range r.Headers {
			for _, v := range req.Header.Values(name) {
				add(v)
				scheme, token, ok := strings.Cut(v, " ")
				if !ok {
					continue
				}
				add(token)
				if strings.EqualFold(scheme, "Basic") {
					if b, err := base64.StdEncoding.DecodeString(token); err == nil {
						add(string(b))
						_, pass, _ := strings.Cut(string(b), ":")
						add(pass)
					}
				}
			}
		}
		if len(r.Query) > 0 {
			q := req.URL.Query()
			for _, name := range r.Query {
				for _, v := range q[name] {
					add(v)
				}
			}
		}
		for _, name := range r.Cookies {
			for _, c := range req.Cookies() {
				if c.Name == name {
					add(c.Value)
				}
			}
		}
	}
	return out
}

// redacted replaces a secret in what a caller or a log is shown.
const redacted = "[redacted]"

// scrub replaces every secret in b, the longest first (one may contain
// another).
func scrub(b []byte, secrets []string) []byte {
	sorted := slices.Clone(secrets)
	slices.SortFunc(sorted, func(x, y string) int { return len(y) - len(x) })
	for _, s := range sorted {
		if s != "" {
			b = bytes.ReplaceAll(b, []byte(s), []byte(redacted))
		}
	}
	return b
}

func longest(secrets []string) int {
	n := 0
	for _, s := range secrets {
		n = max(n, len(s))
	}
	return n
}

// ShownURL is a document's or an endpoint's location as logs may show it:
// a URL without its user info, query and fragment (where a token or a key
// may be: `source x openapi https://host/spec.json?token=...`), a file path
// as it is.
func ShownURL(location string) string {
	u, err := url.Parse(location)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return location
	}
	if u.User == nil && u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" {
		return location
	}
	query := u.RawQuery != "" || u.ForceQuery
	u.RawQuery, u.ForceQuery, u.User, u.Fragment, u.RawFragment = "", false, nil, "", ""
	if query {
		return u.String() + "?…"
	}
	return u.String()
}

// WithoutQuery is withoutQuery for a source's own log lines (a refresh
// that failed to fetch its document).
func WithoutQuery(err error) error { return withoutQuery(err) }

// withoutQuery takes the query (and user info) out of the URL that a
// transport error (*url.Error) names: an api_key query credential is in
// it, and the error's text reaches the debug log as the call's cause.
func withoutQuery(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	if u, perr := url.Parse(ue.URL); perr == nil {
		u.RawQuery, u.ForceQuery, u.User, u.Fragment = "", false, nil, ""
		ue.URL = u.String()
	} else {
		ue.URL = "(the request's URL)"
	}
	return err
}

// scrubError is err with the secrets cut out of its text (for a cause that
// is logged).
func scrubError(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := string(scrub([]byte(msg), secrets)); clean != msg {
		return errors.New(clean)
	}
	return err
}
