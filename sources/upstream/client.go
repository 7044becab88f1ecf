package upstream

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/edgemcp/edgemcp/internal/netguard"
	"github.com/edgemcp/edgemcp/pipeline"
)

// Transport is the connection pool every HTTP source shares: one per
// process, so a reload keeps the upstream connections it finds open. Unlike
// http.DefaultTransport it keeps enough idle connections per upstream for
// a busy gateway (the default 2 would make most calls dial).
var Transport http.RoundTripper = newTransport()

func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 256
	t.IdleConnTimeout = 90 * time.Second
	return t
}

// NewClient is the HTTP client of a source: redirects are followed only
// within the origin of the first request, so a credential never travels
// to another host; a redirect elsewhere is answered as the 3xx it is.
func NewClient(transport http.RoundTripper) *http.Client {
	return &http.Client{Transport: transport, CheckRedirect: netguard.StayOnOrigin}
}

// ExcerptSize bounds how much of a failed response's body a caller sees.
const ExcerptSize = 500

// StatusError is an upstream answer outside 2xx. Its message is what the
// caller sees: the status and the start of the body.
type StatusError struct {
	Code    int
	Status  string // "404 Not Found"
	Excerpt string
}

// NewStatusError reads the start of a failed response's body (no more).
// secrets are the credential values the request carried (Secrets): an
// upstream that quotes the request back (an echo, a debugging error page)
// must not hand them to the caller, so they are cut out of the excerpt.
func NewStatusError(res *http.Response, secrets ...string) *StatusError {
	const limit = 4 * ExcerptSize
	body, _ := io.ReadAll(io.LimitReader(res.Body, limit))
	if len(secrets) > 0 {
		if len(body) == limit {
			// The read may have cut a secret: a start of one at the end
			// would not match below. Drop what could be one.
			body = body[:max(0, limit-longest(secrets))]
		}
		body = scrub(body, secrets)
	}
	return &StatusError{Code: res.StatusCode, Status: res.Status, Excerpt: excerpt(body)}
}

func (e *StatusError) Error() string {
	if e.Excerpt == "" {
		return "HTTP " + e.Status
	}
	return "HTTP " + e.Status + ": " + e.Excerpt
}

// SafeMessage: the status and excerpt are the upstream's answer to this
// caller's request, shown as they are.
func (e *StatusError) SafeMessage() string { return e.Error() }

// ErrorMeta implements pipeline.MetaError: the status, as a 2xx result
// carries it.
func (e *StatusError) ErrorMeta() map[string]any {
	return map[string]any{"edgemcp/http": map[string]any{"status": e.Code}}
}

// excerpt is the first ExcerptSize bytes of a body, cut at a character.
func excerpt(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) <= ExcerptSize {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	cut := ExcerptSize
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(b[:cut]), "\uFFFD") + "…"
}

// ReadBody reads a response body whole, failing beyond max bytes
// (max_response_size).
func ReadBody(res *http.Response, max int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(res.Body, max+1))
	if err != nil {
		return nil, Failed("upstream response cut off", err)
	}
	if int64(len(body)) > max {
		return nil, Failed(fmt.Sprintf("upstream response larger than %d bytes (max_response_size)", max), nil)
	}
	return body, nil
}

// Failed is a failure the caller may see (public), with its cause for the
// debug log.
func Failed(public string, cause error) error {
	return &pipeline.PublicError{Public: public, Cause: cause}
}
