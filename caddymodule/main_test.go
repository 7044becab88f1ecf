package caddymodule

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestMain drops this test binary's own database when its tests end, and
// makes the default HTTP transport redial a connection the server reset
// while it was being opened.
func TestMain(m *testing.M) {
	http.DefaultTransport.(*http.Transport).DialContext = redialOnReset
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
