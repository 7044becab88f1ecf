package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// TestOAuth2ClientCredentials: the token endpoint is asked once with the
// client's credentials and scopes; the token is reused until it expires.
func TestOAuth2ClientCredentials(t *testing.T) {
	var issued atomic.Int32
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		if r.FormValue("grant_type") != "client_credentials" || user != "gw" || pass != "s3cret" || r.FormValue("scope") != "read write" {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":"invalid_client"}`)
			return
		}
		n := issued.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("tok%d", n), "token_type": "Bearer", "expires_in": 3600})
	}))
	defer tokens.Close()

	c := NewOAuth2(tokens.URL, "gw", "s3cret", []string{"read", "write"}, 5*time.Second)
	for range 3 {
		req, _ := http.NewRequest("GET", "http://upstream.invalid/", nil)
		if err := c.Apply(context.Background(), req, &pipeline.Call{}); err != nil {
			t.Fatal(err)
		}
		if got := req.Header.Get("Authorization"); got != "Bearer tok1" {
			t.Errorf("Authorization %q", got)
		}
	}
	if issued.Load() != 1 {
		t.Errorf("%d tokens issued for 3 calls, want 1", issued.Load())
	}

	bad := NewOAuth2(tokens.URL, "gw", "wrong", nil, 5*time.Second)
	req, _ := http.NewRequest("GET", "http://upstream.invalid/", nil)
	err := bad.Apply(context.Background(), req, &pipeline.Call{})
	if got := pipeline.SafeText(err, ""); got != "credential oauth2: no token from the token endpoint" {
		t.Errorf("refused client: %q", got)
	}
}

// TestOAuth2TokenRequestStaysOnItsOrigin: a token endpoint that answers
// 307 to another origin does not get the client secret re-posted there
// (Go's client re-posts the body, and keeps Authorization for another
// port of the same host); the credential fails without a token.
func TestOAuth2TokenRequestStaysOnItsOrigin(t *testing.T) {
	var stolen atomic.Int32
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token": "t", "token_type": "Bearer"}`)
	}))
	defer thief.Close()
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, thief.URL+"/token", http.StatusTemporaryRedirect)
	}))
	defer tokens.Close()

	c := NewOAuth2(tokens.URL, "gw", "s3cret", nil, 5*time.Second)
	req, _ := http.NewRequest("GET", "http://upstream.invalid/", nil)
	err := c.Apply(context.Background(), req, &pipeline.Call{})
	if err == nil {
		t.Errorf("a token came through the redirect: %q", req.Header.Get("Authorization"))
	}
	if n := stolen.Load(); n != 0 {
		t.Errorf("the other origin received %d token requests", n)
	}
}
