package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestMCPCallHeadersStayOnTheHost: `caddy mcp call --header` does not
// follow a redirect to another origin, where Go's client would re-send the
// headers (all of them to another port of the same host, and all but
// Authorization and Cookie elsewhere): the other server never sees them,
// and the command says why it stopped. A redirect on the same origin is
// still followed.
func TestMCPCallHeadersStayOnTheHost(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Gateway-Key")+"|"+r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer other.Close()
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
		case "/here":
			http.Redirect(w, r, "/missing", http.StatusTemporaryRedirect)
		default:
			http.Error(w, "not here either", http.StatusNotFound)
		}
	}))
	defer front.Close()

	_, errOut, err := runMCPCommand(t, "call", front.URL+"/away", "get-customer", "customer_id=1",
		"--header", "X-Gateway-Key: s3cret", "--header", "Authorization: Bearer tok")
	if err == nil || !strings.Contains(errOut, "redirect to "+other.URL+" not followed") {
		t.Errorf("redirect away: err %v, stderr %q", err, errOut)
	}
	mu.Lock()
	if len(seen) != 0 {
		t.Errorf("the other origin received %q", seen)
	}
	mu.Unlock()
	if _, errOut, err := runMCPCommand(t, "call", front.URL+"/here", "get-customer", "--header", "X-Gateway-Key: s3cret"); err == nil || !strings.Contains(errOut, "not here either") {
		t.Errorf("same-origin redirect: err %v, stderr %q", err, errOut)
	}
}
