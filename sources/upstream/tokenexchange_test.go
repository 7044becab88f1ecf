package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
)

// exchangeFor is a token_exchange credential at the server's endpoint for
// its upstream audience, as an operator configures it.
func exchangeFor(t *testing.T, as *testservices.TokenServer, edit func(*TokenExchangeConfig)) *TokenExchange {
	t.Helper()
	cfg := TokenExchangeConfig{TokenURL: as.TokenURL, ClientID: as.ClientID, ClientSecret: as.ClientSecret,
		Audience: []string{as.Audience}, Scopes: []string{"issues:read"}, Timeout: 10 * time.Second}
	if edit != nil {
		edit(&cfg)
	}
	te, err := NewTokenExchange(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return te
}

// callAs is a call of a verified caller who brought token.
func callAs(subject, token string) *pipeline.Call {
	call := &pipeline.Call{Identity: &pipeline.Identity{Provider: "sso", Subject: subject}, Request: &pipeline.RequestInfo{Header: http.Header{}}}
	if token != "" {
		call.Request.Header.Set("Authorization", "Bearer "+token)
	}
	return call
}

// sent is the Authorization header the credential puts on a request to
// the upstream for call.
func sent(t *testing.T, te *TokenExchange, call *pipeline.Call) (string, error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://upstream.invalid/", nil)
	err := te.Apply(context.Background(), req, call)
	return strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer "), err
}

// TestTokenExchangeRealServer: against zitadel/oidc's provider, each
// caller's token is exchanged for a token the server issued to that
// caller, never sent upstream itself; a caller's repeated calls reuse
// their exchanged token; another caller gets their own.
func TestTokenExchangeRealServer(t *testing.T) {
	as := testservices.StartTokenServer(t)
	te := exchangeFor(t, as, nil)
	alice, bob := as.SubjectToken(t, "alice"), as.SubjectToken(t, "bob")

	a1, err := sent(t, te, callAs("alice", alice))
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := sent(t, te, callAs("alice", alice))
	b1, err := sent(t, te, callAs("bob", bob))
	if err != nil {
		t.Fatal(err)
	}
	if a1 == alice || b1 == bob || a1 == "" || b1 == "" {
		t.Fatalf("a caller's own token went upstream: alice %q bob %q", a1, b1)
	}
	if as.Subject(a1) != "alice" || as.Subject(b1) != "bob" {
		t.Errorf("exchanged tokens are %q's and %q's", as.Subject(a1), as.Subject(b1))
	}
	if a2 != a1 || as.Exchanges("alice") != 1 || as.Exchanges("bob") != 1 {
		t.Errorf("alice's second call: %q (first %q); exchanges alice %d bob %d", a2, a1, as.Exchanges("alice"), as.Exchanges("bob"))
	}
}

// TestTokenExchangeSingleFlight: concurrent calls of one caller make one
// exchange and all send its token.
func TestTokenExchangeSingleFlight(t *testing.T) {
	as := testservices.StartTokenServer(t)
	te := exchangeFor(t, as, nil)
	// The first exchange is held at the transport until every call has
	// started, so that they all find it in flight or its token kept.
	release := make(chan struct{})
	var requests atomic.Int32
	te.client.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if requests.Add(1) == 1 {
			<-release
		}
		return Transport.RoundTrip(r)
	})
	carol := as.SubjectToken(t, "carol")
	const n = 16
	var started, done sync.WaitGroup
	tokens := make([]string, n)
	errs := make([]error, n)
	started.Add(n)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			started.Done()
			tokens[i], errs[i] = sent(t, te, callAs("carol", carol))
		}()
	}
	started.Wait()
	close(release)
	done.Wait()
	for i := range n {
		if errs[i] != nil || tokens[i] != tokens[0] || as.Subject(tokens[i]) != "carol" {
			t.Fatalf("call %d: %q %v (first %q)", i, tokens[i], errs[i], tokens[0])
		}
	}
	if got := as.Exchanges("carol"); got != 1 || requests.Load() != 1 {
		t.Errorf("%d exchanges (%d token requests) for %d concurrent calls, want 1", got, requests.Load(), n)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTokenExchangeExpiry: an exchanged token is replaced shortly before
// it expires (the server issues five-minute tokens: kept four minutes).
func TestTokenExchangeExpiry(t *testing.T) {
	as := testservices.StartTokenServer(t)
	te := exchangeFor(t, as, nil)
	var mu sync.Mutex
	now := time.Now()
	te.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	dave := as.SubjectToken(t, "dave")

	first, err := sent(t, te, callAs("dave", dave))
	if err != nil {
		t.Fatal(err)
	}
	advance(3*time.Minute + 50*time.Second)
	if again, _ := sent(t, te, callAs("dave", dave)); again != first || as.Exchanges("dave") != 1 {
		t.Errorf("within its life: %q, %d exchanges", again, as.Exchanges("dave"))
	}
	advance(20 * time.Second)
	later, err := sent(t, te, callAs("dave", dave))
	if err != nil || later == first || as.Exchanges("dave") != 2 || as.Subject(later) != "dave" {
		t.Errorf("near its expiry: %q (was %q), %d exchanges, %v", later, first, as.Exchanges("dave"), err)
	}
}

// TestTokenExchangeFailures: a refused exchange is the server's error code
// for the caller (-32000 once the pipeline has it), with neither the
// caller's token nor the client secret in anything said or logged; a call
// without identity or token is refused before any request.
func TestTokenExchangeFailures(t *testing.T) {
	as := testservices.StartTokenServer(t)
	erin := as.SubjectToken(t, "erin")
	for _, c := range []struct {
		name  string
		edit  func(*TokenExchangeConfig)
		token string
		code  string
	}{
		{"another audience", func(c *TokenExchangeConfig) { c.Audience = []string{"https://other.test"} }, erin, "invalid_target"},
		{"a scope not granted", func(c *TokenExchangeConfig) { c.Scopes = []string{"admin"} }, erin, "invalid_scope"},
		{"a forged caller token", nil, erin[:len(erin)-4] + "AAAA", "invalid_request"},
		{"a wrong client secret", func(c *TokenExchangeConfig) { c.ClientSecret = "wrong-secret-value" }, erin, "invalid_client"},
	} {
		te := exchangeFor(t, as, c.edit)
		got, err := sent(t, te, callAs("erin", c.token))
		var refused *ExchangeRefused
		if !errors.As(err, &refused) || refused.Code != c.code || got != "" {
			t.Errorf("%s: %v (sent %q), want %s", c.name, err, got, c.code)
			continue
		}
		msg := pipeline.SafeText(err, "")
		if msg != "credential token_exchange: the authorization server refused the exchange: "+c.code {
			t.Errorf("%s: the caller reads %q", c.name, msg)
		}
		for _, secret := range []string{c.token, as.ClientSecret, te.clientSecret} {
			if strings.Contains(err.Error(), secret) || strings.Contains(fmt.Sprint(refused.ErrorMeta()), secret) {
				t.Errorf("%s: a secret is in %q", c.name, err)
			}
		}
		if perr := pipeline.Fail(pipeline.StageExecution, err, "%s", msg); perr.Code != pipeline.CodeStageFailed {
			t.Errorf("%s: code %d", c.name, perr.Code)
		}
	}
	if as.Exchanges("erin") != 0 {
		t.Errorf("%d exchanges granted", as.Exchanges("erin"))
	}

	te := exchangeFor(t, as, nil)
	for call, want := range map[*pipeline.Call]string{
		{Request: &pipeline.RequestInfo{Header: http.Header{"Authorization": {"Bearer " + erin}}}}: "no verified identity",
		callAs("erin", ""): "no bearer token to exchange",
	} {
		if _, err := sent(t, te, call); !strings.Contains(pipeline.SafeText(err, ""), want) {
			t.Errorf("%v, want %q", err, want)
		}
	}
}

// TestTokenExchangeStaysOnItsOrigin: a token endpoint that redirects to
// another origin does not get the caller's token and the client secret
// re-posted there; the exchange fails with the status.
func TestTokenExchangeStaysOnItsOrigin(t *testing.T) {
	var stolen atomic.Int32
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
		fmt.Fprint(w, `{"access_token":"t","token_type":"Bearer","expires_in":60}`)
	}))
	defer thief.Close()
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, thief.URL+"/token", http.StatusTemporaryRedirect)
	}))
	defer tokens.Close()
	te, err := NewTokenExchange(TokenExchangeConfig{TokenURL: tokens.URL, ClientID: "gw", ClientSecret: "s3cret", Audience: []string{"https://api.test"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sent(t, te, callAs("frank", "frank-token"))
	var refused *ExchangeRefused
	if !errors.As(err, &refused) || refused.Status != http.StatusTemporaryRedirect || stolen.Load() != 0 {
		t.Errorf("%v; the other origin received %d requests", err, stolen.Load())
	}
}

// TestTokenExchangeRequest: the request is the RFC's, with each client
// authentication: client_secret_basic (form-encoded parts) or
// client_secret_post; every audience and resource; jwt subject tokens.
func TestTokenExchangeRequest(t *testing.T) {
	var got *http.Request
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		got = r
		fmt.Fprint(w, `{"access_token":"x","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"bearer","expires_in":60}`)
	}))
	defer tokens.Close()
	for _, auth := range []string{"basic", "post"} {
		te, err := NewTokenExchange(TokenExchangeConfig{TokenURL: tokens.URL, ClientID: "gate way", ClientSecret: "s:3", ClientAuth: auth,
			SubjectTokenType: "jwt", Audience: []string{"a1", "a2"}, Resource: []string{"https://api.test/v1"}, Scopes: []string{"r", "w"}})
		if err != nil {
			t.Fatal(err)
		}
		if tok, err := sent(t, te, callAs("gina", "gina-token")); err != nil || tok != "x" {
			t.Fatalf("%s: %q %v", auth, tok, err)
		}
		f := got.PostForm
		if f.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" || f.Get("subject_token") != "gina-token" ||
			f.Get("subject_token_type") != TokenTypeJWT || f.Get("requested_token_type") != TokenTypeAccess ||
			strings.Join(f["audience"], " ") != "a1 a2" || f.Get("resource") != "https://api.test/v1" || f.Get("scope") != "r w" {
			t.Errorf("%s: form %v", auth, f)
		}
		user, pass, basic := got.BasicAuth()
		switch auth {
		case "basic":
			if !basic || user != "gate+way" || pass != "s%3A3" || f.Has("client_secret") {
				t.Errorf("basic: %q %q %t, form %v", user, pass, basic, f)
			}
		case "post":
			if basic || f.Get("client_id") != "gate way" || f.Get("client_secret") != "s:3" {
				t.Errorf("post: basic %t, form %v", basic, f)
			}
		}
	}
}

// TestTokenExchangeCaddyfile: the credential's block, and its mistakes at
// their line.
func TestTokenExchangeCaddyfile(t *testing.T) {
	var c Config
	d := caddyfile.NewTestDispenser(`credential token_exchange {
		token_url https://idp.test/oauth/token
		client_id gateway
		client_secret {env.TE_SECRET}
		client_auth post
		audience https://api.test
		resource https://api.test/v1 https://api.test/v2
		scopes issues:read issues:write
		subject_token_type jwt
	}`)
	d.Next()
	if _, err := c.UnmarshalSubdirective(d); err != nil {
		t.Fatal(err)
	}
	cc := c.Credentials[0]
	if cc.Kind != "token_exchange" || cc.TokenURL != "https://idp.test/oauth/token" || cc.ClientSecret != "{env.TE_SECRET}" || cc.ClientAuth != "post" ||
		len(cc.Resource) != 2 || len(cc.Scopes) != 2 || cc.SubjectTokenType != "jwt" || !cc.FromCaller() {
		t.Errorf("%+v", cc)
	}
	t.Setenv("TE_SECRET", "from-env")
	b, err := c.Build(caddy.Context{}, caddy.NewReplacer())
	if err != nil {
		t.Fatal(err)
	}
	if te := b.Credentials[0].(*TokenExchange); te.clientSecret != "from-env" || te.subjectType != TokenTypeJWT {
		t.Errorf("built %+v", te)
	}
	for text, want := range map[string]string{
		"credential token_exchange {\n\tclient_id g\n\taudience a\n}":                      "token_url and client_id are required",
		"credential token_exchange {\n\ttoken_url https://i/t\n\tclient_id g\n}":           "audience or resource",
		"credential token_exchange {\n\ttoken_url https://i/t\n\tclient_auth jwt\n}":       `client_auth "jwt"`,
		"credential token_exchange {\n\ttoken_url https://i/t\n\tsubject_token_type id\n}": `subject_token_type "id"`,
		"credential token_exchange {\n\tactor_token x\n}":                                  `unrecognized sub-directive "actor_token"`,
		"credential token_exchange extra":                                                  "usage: credential token_exchange",
	} {
		var c Config
		d := caddyfile.NewTestDispenser(text)
		d.Next()
		if _, err := c.UnmarshalSubdirective(d); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "Testfile:") {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
	for _, c := range []struct {
		cfg  TokenExchangeConfig
		want string
	}{
		{TokenExchangeConfig{TokenURL: "http://idp.example.com/t", ClientID: "g"}, "https URL"},
		{TokenExchangeConfig{TokenURL: "https://u:p@idp.test/t", ClientID: "g"}, "not in the URL"},
		{TokenExchangeConfig{TokenURL: "http://127.0.0.1:1/t", ClientID: "g"}, "audience or resource"},
	} {
		if _, err := NewTokenExchange(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	if _, err := NewTokenExchange(TokenExchangeConfig{TokenURL: "https://idp.test/t", ClientID: "g", Resource: []string{"relative/path"}}); err == nil {
		t.Error("a relative resource was accepted")
	}
}
