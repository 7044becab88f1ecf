package upstream

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// flaky answers the first n requests with status (and Retry-After when
// set), then 200 with the request body echoed.
func flaky(t *testing.T, n int32, status int, retryAfter string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var seen atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if seen.Add(1) <= n {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			w.WriteHeader(status)
			return
		}
		w.Write(append([]byte("ok:"), b...))
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

var fast = Retry{Attempts: 2, Base: time.Millisecond, Max: 5 * time.Millisecond, MaxRetryAfter: 2 * time.Second}

func send(t *testing.T, r Retry, method, url, body string, b *Breaker) (*http.Response, error) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Send(context.Background(), NewClient(http.DefaultTransport), req, b)
	if res != nil {
		t.Cleanup(func() { res.Body.Close() })
	}
	return res, err
}

func TestRetryIdempotentOnly(t *testing.T) {
	for _, tc := range []struct {
		method     string
		status     int
		wantStatus int
		wantTries  int32
	}{
		{"GET", 503, 200, 3},
		{"PUT", 502, 200, 3},
		{"DELETE", 504, 200, 3},
		{"POST", 503, 503, 1},  // not idempotent: sent once
		{"PATCH", 503, 503, 1}, // not idempotent
		{"GET", 500, 500, 1},   // a 500 may have done the work
		{"GET", 404, 404, 1},   // a client error stays one
		{"GET", 429, 200, 3},   // too many requests: later
	} {
		srv, seen := flaky(t, 2, tc.status, "")
		res, err := send(t, fast, tc.method, srv.URL, "payload", nil)
		if err != nil || res.StatusCode != tc.wantStatus || seen.Load() != tc.wantTries {
			t.Errorf("%s after %d: %v %v, %d tries; want %d after %d tries", tc.method, tc.status, res, err, seen.Load(), tc.wantStatus, tc.wantTries)
			continue
		}
		if tc.wantStatus == 200 {
			if b, _ := io.ReadAll(res.Body); string(b) != "ok:payload" {
				t.Errorf("%s: the retried request's body arrived as %q", tc.method, b)
			}
		}
	}
	// Out of attempts: the last answer is the result.
	srv, seen := flaky(t, 5, 503, "")
	if res, err := send(t, fast, "GET", srv.URL, "", nil); err != nil || res.StatusCode != 503 || seen.Load() != 3 {
		t.Errorf("out of attempts: %v %v after %d", res, err, seen.Load())
	}
}

// TestRetrySafePost: a POST marked Safe (a GraphQL query) is retried
// like a GET, its body sent again; unmarked it is sent once.
func TestRetrySafePost(t *testing.T) {
	safe := fast
	safe.Safe = true
	srv, seen := flaky(t, 2, 503, "")
	res, err := send(t, safe, "POST", srv.URL, "payload", nil)
	if err != nil || res.StatusCode != 200 || seen.Load() != 3 {
		t.Fatalf("safe POST after 503: %v %v, %d tries; want 200 after 3", res, err, seen.Load())
	}
	if b, _ := io.ReadAll(res.Body); string(b) != "ok:payload" {
		t.Errorf("the retried body arrived as %q", b)
	}
	srv, seen = flaky(t, 2, 503, "")
	if res, err := send(t, fast, "POST", srv.URL, "payload", nil); err != nil || res.StatusCode != 503 || seen.Load() != 1 {
		t.Errorf("unmarked POST: %v %v, %d tries; want 503 after 1", res, err, seen.Load())
	}
}

// TestRetryAfter is honoured (no sooner), and a wait longer than the
// policy allows answers with the 429 at once.
func TestRetryAfter(t *testing.T) {
	srv, _ := flaky(t, 1, 429, "1")
	start := time.Now()
	res, err := send(t, fast, "GET", srv.URL, "", nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("%v %v", res, err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("retried after %s, before Retry-After: 1", d)
	}
	srv, seen := flaky(t, 1, 429, "3600")
	if res, err := send(t, fast, "GET", srv.URL, "", nil); err != nil || res.StatusCode != 429 || seen.Load() != 1 {
		t.Errorf("Retry-After beyond the cap: %v %v, %d tries", res, err, seen.Load())
	}
	if d, ok := retryAfter(time.Now().Add(90*time.Second).UTC().Format(http.TimeFormat), time.Now()); !ok || d < 80*time.Second {
		t.Errorf("HTTP-date Retry-After: %s %t", d, ok)
	}
}

// TestRetryConnectionErrors: a refused connection is retried, then
// reported as "upstream unreachable" without the address.
func TestRetryConnectionErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = send(t, fast, "GET", "http://"+addr+"/x", "", nil)
	if got := pipeline.SafeText(err, ""); got != "upstream unreachable" {
		t.Errorf("refused: %q (%v)", got, err)
	}
}

// TestBreaker opens after N failures within the window, fails fast while
// open, lets one trial through after the cooldown, and closes when it
// succeeds (time is the test's).
func TestBreaker(t *testing.T) {
	now := time.Unix(1000, 0)
	b := NewBreaker(3, 10*time.Second, 30*time.Second)
	b.now = func() time.Time { return now }

	var fail atomic.Bool
	fail.Store(true)
	var seen atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		if fail.Load() {
			w.WriteHeader(503)
		}
	}))
	defer srv.Close()
	once := Retry{}

	// Two failures, then the window passes: still closed.
	for range 2 {
		send(t, once, "GET", srv.URL, "", b)
	}
	now = now.Add(11 * time.Second)
	send(t, once, "GET", srv.URL, "", b)
	if b.Open() {
		t.Fatal("opened on failures spread beyond the window")
	}
	for range 2 {
		send(t, once, "GET", srv.URL, "", b)
	}
	if !b.Open() {
		t.Fatal("not open after 3 failures within the window")
	}
	before := seen.Load()
	if _, err := send(t, once, "GET", srv.URL, "", b); pipeline.SafeText(err, "") != "source unavailable" || seen.Load() != before {
		t.Fatalf("while open: %v, %d requests sent", err, seen.Load()-before)
	}
	// Cooled down: one trial, which fails: open again.
	now = now.Add(31 * time.Second)
	send(t, once, "GET", srv.URL, "", b)
	if seen.Load() != before+1 || !b.Open() {
		t.Fatalf("failed trial: %d sent, open %t", seen.Load()-before, b.Open())
	}
	// Cooled down again, the upstream is back: the trial closes it.
	now = now.Add(31 * time.Second)
	fail.Store(false)
	if res, err := send(t, once, "GET", srv.URL, "", b); err != nil || res.StatusCode != 200 || b.Open() {
		t.Fatalf("successful trial: %v %v open %t", res, err, b.Open())
	}
	if res, err := send(t, once, "GET", srv.URL, "", b); err != nil || res.StatusCode != 200 {
		t.Fatalf("after closing: %v %v", res, err)
	}
}
