package limits

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/ratelimit"
)

// A counter is kept per subject, falling back to the client's host
// without one, per host, or per tool, as the rule says.
func TestKey(t *testing.T) {
	alice := &pipeline.Identity{Subject: "alice"}
	for _, c := range []struct {
		by   string
		id   *pipeline.Identity
		want string
	}{
		{"", alice, "tool\x00sub\x00t\x00alice"},
		{"subject", nil, "tool\x00ip\x00t\x00192.0.2.1"},
		{"ip", alice, "tool\x00ip\x00t\x00192.0.2.1"},
		{"tool", alice, "tool\x00tool\x00t"},
	} {
		if got := key("tool", Rule{By: c.by}, "t", c.id, "192.0.2.1:5000"); got != c.want {
			t.Errorf("by %q: %q, want %q", c.by, got, c.want)
		}
	}
}

// Over the endpoint's rule a request gets a 429 HandlerError and
// Retry-After.
func TestEndpointRefusal(t *testing.T) {
	l := New(ratelimit.NewLocal(0))
	rule := Rule{N: 1, Period: time.Hour}
	r := httptest.NewRequestWithContext(context.Background(), "POST", "/mcp", nil)
	if err := l.Endpoint(httptest.NewRecorder(), r, rule, nil); err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	err := l.Endpoint(w, r, rule, nil)
	if err == nil || !strings.Contains(err.Error(), "rate limited: retry in") || w.Header().Get("Retry-After") == "" {
		t.Fatalf("second request: %v, Retry-After %q", err, w.Header().Get("Retry-After"))
	}
}
