package caddymodule

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dlclark/regexp2/v2"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestMain drops this test binary's own database when its tests end, and
// gives the tests' HTTP clients (the default transport) a fresh connection
// per request, redialed when the server resets it while it is being
// opened: the tests reload Caddy all the time, a reload closes the previous
// config's connections, and a keep-alive connection that closes under a
// POST fails it with EOF (Go does not retry a POST), where a real client
// would reconnect. A backtracking regular expression in a script
// ends after a second here rather than script.RegexMatchTimeout: the tests
// that abandon one wait for its goroutine to end, and nothing here depends
// on the production bound (pipeline/script tests it).
func TestMain(m *testing.M) {
	tr := http.DefaultTransport.(*http.Transport)
	tr.DialContext, tr.DisableKeepAlives = redialOnReset, true
	http.DefaultClient.Transport = retryAfterReload{tr}
	regexp2.DefaultMatchTimeout = time.Second
	os.Exit(testservices.Main(m))
}

// redialOnReset dials, and dials again (a few times) when the connect
// itself is reset. A reload replaces Caddy's listening socket: a connection
// queued on the old one is reset before it is accepted, and a real client
// reconnects. Nothing has been sent on such a connection, so trying again
// cannot repeat a request or hide a failure of one.
func redialOnReset(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	for attempt := 0; ; attempt++ {
		conn, err := d.DialContext(ctx, network, addr)
		if err == nil || attempt == 4 || !errors.Is(err, syscall.ECONNRESET) {
			return conn, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 20 * time.Millisecond):
		}
	}
}

// lastReload is when the harness last (re)loaded Caddy (UnixNano).
var lastReload atomic.Int64

// retryAfterReload sends a request again, once, when the server reset its
// connection without answering within two seconds of a reload: the old
// config's server can take a connection just before it stops, as a real
// client meets when a server restarts, and reconnects. Outside that window,
// or after any answer, a failure is the test's.
type retryAfterReload struct{ next http.RoundTripper }

func (rt retryAfterReload) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := rt.next.RoundTrip(req)
	if err == nil || !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) ||
		time.Since(time.Unix(0, lastReload.Load())) > 2*time.Second || (req.Body != nil && req.GetBody == nil) {
		return res, err
	}
	retry := req.Clone(req.Context())
	if req.GetBody != nil {
		body, gerr := req.GetBody()
		if gerr != nil {
			return res, err
		}
		retry.Body = body
	}
	return rt.next.RoundTrip(retry)
}
