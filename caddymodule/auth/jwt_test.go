package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/edgemcp/edgemcp/pipeline"
)

const (
	testIssuer   = "https://idp.test/"
	testAudience = "https://gateway.test/mcp"
)

// signingKey is a private key with its key id and algorithm.
type signingKey struct {
	kid  string
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

func newSigningKey(t testing.TB, kid string, alg jose.SignatureAlgorithm) signingKey {
	t.Helper()
	var (
		priv crypto.Signer
		err  error
	)
	switch alg {
	case jose.RS256, jose.PS256:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case jose.ES384:
		priv, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case jose.EdDSA:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	default:
		t.Fatalf("no key for %s", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid: kid, alg: alg, priv: priv}
}

func (k signingKey) jwk() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"}
}

// claims are a valid token's claims; tests change them.
func validClaims() (jwt.Claims, map[string]any) {
	now := time.Now()
	return jwt.Claims{
		Issuer:    testIssuer,
		Subject:   "user-42",
		Audience:  jwt.Audience{testAudience},
		Expiry:    jwt.NewNumericDate(now.Add(time.Hour)),
		NotBefore: jwt.NewNumericDate(now.Add(-time.Minute)),
		IssuedAt:  jwt.NewNumericDate(now.Add(-time.Minute)),
	}, map[string]any{"scope": "users:read tools:call", "tenant": "acme"}
}

func sign(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, std jwt.Claims, extra map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader(jose.HeaderKey("kid"), kid)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(std).Claims(extra).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (k signingKey) token(t testing.TB, std jwt.Claims, extra map[string]any) string {
	return sign(t, k.alg, k.priv, k.kid, std, extra)
}

// jwksServer is a local identity provider's key set endpoint whose keys the
// test rotates; it counts the fetches.
type jwksServer struct {
	*httptest.Server
	mu      sync.Mutex
	keys    []jose.JSONWebKey
	fetches atomic.Int64
}

func newJWKSServer(t testing.TB, keys ...signingKey) *jwksServer {
	s := &jwksServer{}
	s.set(keys...)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: s.keys})
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) set(keys ...signingKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = nil
	for _, k := range keys {
		s.keys = append(s.keys, k.jwk())
	}
}

func provisionJWT(t testing.TB, j *JWT) *JWT {
	t.Helper()
	if j.Issuer == "" {
		j.Issuer = testIssuer
	}
	if len(j.Audience) == 0 {
		j.Audience = []string{testAudience}
	}
	if err := j.Provision(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	return j
}

func bearer(tok string) *pipeline.AuthRequest {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+tok)
	return &pipeline.AuthRequest{Header: h}
}

// expectRefused checks the refusal is an *AuthError naming reason and that
// the message does not repeat the token.
func expectRefused(t *testing.T, id *pipeline.Identity, err error, tok, reason string) {
	t.Helper()
	var ae *pipeline.AuthError
	if !errors.As(err, &ae) || id != nil {
		t.Fatalf("want an AuthError (%s), got %v, %v", reason, id, err)
	}
	if ae.Reason != reason {
		t.Errorf("reason %q, want %q", ae.Reason, reason)
	}
	if tok != "" && strings.Contains(err.Error(), tok) {
		t.Errorf("error message repeats the token: %v", err)
	}
}

func TestJWTWithJWKSAcceptsEveryAsymmetricFamily(t *testing.T) {
	keys := []signingKey{
		newSigningKey(t, "rsa", jose.RS256), newSigningKey(t, "pss", jose.PS256),
		newSigningKey(t, "ec", jose.ES256), newSigningKey(t, "ed", jose.EdDSA),
	}
	srv := newJWKSServer(t, keys...)
	j := provisionJWT(t, &JWT{JWKSURL: srv.URL})
	for _, k := range keys {
		t.Run(string(k.alg), func(t *testing.T) {
			std, extra := validClaims()
			id, err := j.Authenticate(context.Background(), bearer(k.token(t, std, extra)))
			if err != nil {
				t.Fatal(err)
			}
			if id.Subject != "user-42" || id.Claims["tenant"] != "acme" || id.Claims["iss"] != testIssuer {
				t.Errorf("identity %+v", id)
			}
			if got := id.Scopes(); strings.Join(got, " ") != "users:read tools:call" {
				t.Errorf("scopes %v", got)
			}
		})
	}
	if n := srv.fetches.Load(); n != 1 {
		t.Errorf("key set fetched %d times, want once", n)
	}
}

func TestJWTRefusesBadTokens(t *testing.T) {
	good := newSigningKey(t, "k1", jose.RS256)
	other := newSigningKey(t, "k1", jose.RS256) // same kid, different key: a forgery
	srv := newJWKSServer(t, good)
	j := provisionJWT(t, &JWT{JWKSURL: srv.URL, Leeway: durationPtr(5 * time.Second)})

	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: must(x509.MarshalPKIXPublicKey(good.priv.Public()))})
	now := time.Now()
	cases := []struct {
		name   string
		token  func() string
		reason string
	}{
		{"expired", func() string {
			std, extra := validClaims()
			std.Expiry = jwt.NewNumericDate(now.Add(-time.Minute))
			return good.token(t, std, extra)
		}, "token expired"},
		{"not yet valid", func() string {
			std, extra := validClaims()
			std.NotBefore = jwt.NewNumericDate(now.Add(time.Hour))
			return good.token(t, std, extra)
		}, "token not valid yet"},
		{"wrong issuer", func() string {
			std, extra := validClaims()
			std.Issuer = "https://evil.test/"
			return good.token(t, std, extra)
		}, "wrong issuer"},
		{"wrong audience", func() string {
			std, extra := validClaims()
			std.Audience = jwt.Audience{"https://other-service.test"}
			return good.token(t, std, extra)
		}, "wrong audience"},
		{"no expiry", func() string {
			std, extra := validClaims()
			std.Expiry = nil
			return good.token(t, std, extra)
		}, "token has no expiry"},
		{"no subject", func() string {
			std, extra := validClaims()
			std.Subject = ""
			return good.token(t, std, extra)
		}, "token has no subject"},
		{"wrong signature", func() string {
			std, extra := validClaims()
			return other.token(t, std, extra)
		}, "bad signature"},
		{"tampered payload", func() string {
			std, extra := validClaims()
			parts := strings.Split(good.token(t, std, extra), ".")
			extra["scope"] = "admin"
			parts[1] = strings.Split(good.token(t, std, extra), ".")[1]
			return strings.Join(parts, ".")
		}, "bad signature"},
		{"alg none", func() string {
			std, extra := validClaims()
			hdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT","kid":"k1"}`))
			body, _ := json.Marshal(map[string]any{"iss": std.Issuer, "sub": std.Subject, "aud": testAudience, "exp": std.Expiry, "scope": extra["scope"]})
			return hdr + "." + base64.RawURLEncoding.EncodeToString(body) + "."
		}, "signature algorithm not accepted"},
		{"HS256 signed with the RSA public key (algorithm confusion)", func() string {
			std, extra := validClaims()
			return sign(t, jose.HS256, pubPEM, "k1", std, extra)
		}, "signature algorithm not accepted"},
		{"ES256 header on an RSA key", func() string {
			ec := newSigningKey(t, "k1", jose.ES256)
			std, extra := validClaims()
			return ec.token(t, std, extra)
		}, "signature algorithm does not match the key"},
		{"malformed", func() string { return "not.a.jwt" }, "malformed token"},
		{"too large", func() string { return strings.Repeat("a", maxTokenBytes+1) }, "token too large"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok := c.token()
			id, err := j.Authenticate(context.Background(), bearer(tok))
			expectRefused(t, id, err, tok, c.reason)
		})
	}
	t.Run("no token", func(t *testing.T) {
		for _, h := range []string{"", "Basic dXNlcjpwdw==", "Bearer", "Bearer   "} {
			hdr := http.Header{}
			if h != "" {
				hdr.Set("Authorization", h)
			}
			_, err := j.Authenticate(context.Background(), &pipeline.AuthRequest{Header: hdr})
			var ae *pipeline.AuthError
			if !errors.As(err, &ae) || !ae.Missing {
				t.Errorf("%q: want missing credentials, got %v", h, err)
			}
		}
	})
}

func TestJWTKeyRotationAndUnknownKidRefreshOnce(t *testing.T) {
	k1, k2 := newSigningKey(t, "k1", jose.ES256), newSigningKey(t, "k2", jose.ES256)
	srv := newJWKSServer(t, k1)
	j := provisionJWT(t, &JWT{JWKSURL: srv.URL, JWKSRefreshInterval: caddy.Duration(time.Hour)})
	std, extra := validClaims()
	if _, err := j.Authenticate(context.Background(), bearer(k1.token(t, std, extra))); err != nil {
		t.Fatal(err)
	}
	if n := srv.fetches.Load(); n != 1 {
		t.Fatalf("fetches %d, want 1", n)
	}

	// A made-up kid triggers one refresh, and no more within the interval
	// however many tokens name unknown kids, concurrently or not.
	ghost := newSigningKey(t, "ghost", jose.ES256)
	ghostTok := ghost.token(t, std, extra)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := j.Authenticate(context.Background(), bearer(ghostTok))
			expectRefused(t, id, err, ghostTok, "unknown signing key")
		}()
	}
	wg.Wait()
	if n := srv.fetches.Load(); n != 2 {
		t.Fatalf("fetches %d after unknown kids, want exactly 2 (one refresh)", n)
	}

	// The provider rotates to k2. Within the interval the gateway does not
	// refetch, so k2 tokens are refused ...
	srv.set(k2)
	tok2 := k2.token(t, std, extra)
	id, err := j.Authenticate(context.Background(), bearer(tok2))
	expectRefused(t, id, err, tok2, "unknown signing key")
	if n := srv.fetches.Load(); n != 2 {
		t.Fatalf("fetches %d, want still 2", n)
	}

	// ... and once the interval has passed, one unknown kid refreshes the
	// set: k2 is accepted, k1 (retired) is not.
	j2 := provisionJWT(t, &JWT{JWKSURL: srv.URL, JWKSRefreshInterval: caddy.Duration(50 * time.Millisecond)})
	srv.set(k1)
	if _, err := j2.Authenticate(context.Background(), bearer(k1.token(t, std, extra))); err != nil {
		t.Fatal(err)
	}
	before := srv.fetches.Load()
	srv.set(k2)
	time.Sleep(60 * time.Millisecond)
	if _, err := j2.Authenticate(context.Background(), bearer(tok2)); err != nil {
		t.Fatalf("rotated key refused: %v", err)
	}
	if n := srv.fetches.Load() - before; n != 1 {
		t.Errorf("rotation cost %d fetches, want 1", n)
	}
	tok1 := k1.token(t, std, extra)
	id, err = j2.Authenticate(context.Background(), bearer(tok1))
	expectRefused(t, id, err, tok1, "unknown signing key")
}

func TestJWTKeySetUnavailable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer srv.Close()
	j := provisionJWT(t, &JWT{JWKSURL: srv.URL})
	k := newSigningKey(t, "k1", jose.ES256)
	std, extra := validClaims()
	_, err := j.Authenticate(context.Background(), bearer(k.token(t, std, extra)))
	var ae *pipeline.AuthError
	if err == nil || errors.As(err, &ae) {
		t.Fatalf("want a provider failure (not the caller's fault), got %v", err)
	}
}

func TestJWTSecret(t *testing.T) {
	secret := strings.Repeat("0123456789abcdef", 4) // 64 bytes: enough for HS512
	t.Setenv("EDGEMCP_TEST_JWT_SECRET", secret)
	j := provisionJWT(t, &JWT{Secret: "{env.EDGEMCP_TEST_JWT_SECRET}"})
	std, extra := validClaims()
	for _, alg := range hmacAlgs {
		if _, err := j.Authenticate(context.Background(), bearer(sign(t, alg, []byte(secret), "", std, extra))); err != nil {
			t.Errorf("%s: %v", alg, err)
		}
	}
	wrong := sign(t, jose.HS256, []byte("another-secret-another-secret-another"), "", std, extra)
	id, err := j.Authenticate(context.Background(), bearer(wrong))
	expectRefused(t, id, err, wrong, "bad signature")

	rs := newSigningKey(t, "", jose.RS256).token(t, std, extra)
	id, err = j.Authenticate(context.Background(), bearer(rs))
	expectRefused(t, id, err, rs, "signature algorithm not accepted")

	if err := (&JWT{Secret: "short", Audience: []string{"a"}}).Provision(caddy.Context{}); err == nil {
		t.Error("a short secret was accepted")
	}
}

func TestJWTStaticKeyFile(t *testing.T) {
	k := newSigningKey(t, "", jose.EdDSA)
	path := filepath.Join(t.TempDir(), "pub.pem")
	block := &pem.Block{Type: "PUBLIC KEY", Bytes: must(x509.MarshalPKIXPublicKey(k.priv.Public()))}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	j := provisionJWT(t, &JWT{KeyFile: path})
	std, extra := validClaims()
	if _, err := j.Authenticate(context.Background(), bearer(k.token(t, std, extra))); err != nil {
		t.Fatal(err)
	}
	other := newSigningKey(t, "", jose.EdDSA).token(t, std, extra)
	id, err := j.Authenticate(context.Background(), bearer(other))
	expectRefused(t, id, err, other, "bad signature")
}

func TestJWTConfigErrors(t *testing.T) {
	for name, j := range map[string]*JWT{
		"no key source":     {Audience: []string{"a"}},
		"two key sources":   {Secret: strings.Repeat("s", 40), JWKSURL: "https://idp.test/jwks", Audience: []string{"a"}},
		"no audience":       {JWKSURL: "https://idp.test/jwks"},
		"http jwks":         {JWKSURL: "http://idp.test/jwks", Audience: []string{"a"}},
		"hs alg with jwks":  {JWKSURL: "https://idp.test/jwks", Audience: []string{"a"}, Algorithms: []string{"HS256"}},
		"missing key file":  {KeyFile: "/nonexistent/key.pem", Audience: []string{"a"}},
		"leeway above 5min": {JWKSURL: "https://idp.test/jwks", Audience: []string{"a"}, Leeway: durationPtr(time.Hour)},
	} {
		if err := j.Provision(caddy.Context{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func durationPtr(d time.Duration) *caddy.Duration {
	c := caddy.Duration(d)
	return &c
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestJWTVerifiedTokenCache(t *testing.T) {
	k := newSigningKey(t, "k1", jose.ES256)
	srv := newJWKSServer(t, k)
	j := provisionJWT(t, &JWT{JWKSURL: srv.URL})
	std, extra := validClaims()
	tok := k.token(t, std, extra)
	first, err := j.Authenticate(context.Background(), bearer(tok))
	if err != nil {
		t.Fatal(err)
	}
	// A later stage (a mapper script) altering its identity must not
	// change what the next request with the same token gets.
	first.Claims["scope"] = "admin"
	second, err := j.Authenticate(context.Background(), bearer(tok))
	if err != nil || second.Subject != "user-42" || second.Claims["scope"] != "users:read tools:call" {
		t.Fatalf("cached identity %+v %v", second, err)
	}
	if len(j.verified.entries) != 1 {
		t.Errorf("cache entries %d, want 1", len(j.verified.entries))
	}
	for key := range j.verified.entries {
		if _, ok := j.verified.get(key, time.Now().Add(2*time.Hour)); ok {
			t.Error("a cached token outlived its exp")
		}
	}
	if len(j.verified.entries) != 0 {
		t.Error("the expired entry was kept")
	}
}
