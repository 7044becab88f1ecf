package script

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The dial-time check: an internal address is reached only when fetch_allow
// names it; public addresses only pass the host check.
func TestFetchRefusesInternalAddresses(t *testing.T) {
	for _, c := range []struct {
		allow []string
		addr  string
		ok    bool
	}{
		{[]string{"api.example.com"}, "93.184.215.14:443", true},
		{[]string{"api.example.com"}, "127.0.0.1:80", false},
		{[]string{"api.example.com"}, "[::1]:80", false},
		{[]string{"api.example.com"}, "10.1.2.3:80", false},
		{[]string{"api.example.com"}, "172.16.0.1:80", false},
		{[]string{"api.example.com"}, "192.168.1.1:80", false},
		{[]string{"api.example.com"}, "169.254.169.254:80", false}, // cloud metadata
		{[]string{"api.example.com"}, "100.64.0.1:80", false},
		{[]string{"api.example.com"}, "0.0.0.0:80", false},
		{[]string{"api.example.com"}, "[fd00::1]:80", false},
		{[]string{"api.example.com"}, "[fe80::1]:80", false},
		{[]string{"api.example.com"}, "[::ffff:127.0.0.1]:80", false},
		{[]string{"api.example.com"}, "224.0.0.1:80", false},
		{[]string{"127.0.0.1:8080"}, "127.0.0.1:8080", true},
		{[]string{"127.0.0.1:8080"}, "127.0.0.2:8080", false},
		{[]string{"localhost:8080"}, "127.0.0.1:8080", true},
		{[]string{"localhost"}, "[::1]:80", true},
		{[]string{"idp.internal", "10.0.0.0/8"}, "10.9.8.7:8443", true},
		{[]string{"idp.internal", "10.0.0.0/8"}, "192.168.0.1:8443", false},
		{[]string{"[fd00::1]:80"}, "[fd00::1]:80", true},
	} {
		err := newFetcher(c.allow, time.Second, 1).checkDial("tcp", c.addr, nil)
		if (err == nil) != c.ok {
			t.Errorf("fetch_allow %v, dial %s: %v, want allowed=%v", c.allow, c.addr, err, c.ok)
		}
		if err != nil && strings.Contains(err.Error(), "example.com") {
			t.Errorf("error names the rule list: %v", err)
		}
	}
}

// The check is on the dialer: whatever passed the host check (a name that
// resolved to loopback, a redirect), the connection itself is refused.
func TestFetchDialerRefusesLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	f := newFetcher([]string{"api.example.com"}, time.Second, 1)
	resp, err := f.client.Get(srv.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatal("the fetch client reached a loopback server no rule names")
	}
	if !strings.Contains(err.Error(), "internal address") {
		t.Errorf("error %v", err)
	}
	// Named by IP, or by its network, the same server is reached.
	for _, allow := range []string{strings.TrimPrefix(srv.URL, "http://"), "127.0.0.0/8"} {
		f := newFetcher([]string{allow}, time.Second, 1)
		resp, err := f.client.Get(srv.URL)
		if err != nil {
			t.Errorf("fetch_allow %s: %v", allow, err)
			continue
		}
		resp.Body.Close()
	}
}

func TestFetchAllowNetworks(t *testing.T) {
	for entry, ok := range map[string]bool{"10.0.0.0/8": true, "fd00::/8": true, "10.0.0.0/33": false, "a/b": false} {
		if err := ParseFetchAllow(entry); (err == nil) != ok {
			t.Errorf("ParseFetchAllow(%q) = %v, want ok=%v", entry, err, ok)
		}
	}
	f := newFetcher([]string{"10.0.0.0/8"}, time.Second, 1)
	for u, want := range map[string]bool{"http://10.1.2.3/x": true, "http://11.1.2.3/x": false, "http://ten.example/x": false} {
		if got := f.allowed(mustURL(t, u)); got != want {
			t.Errorf("allowed(%s) = %v, want %v", u, got, want)
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
