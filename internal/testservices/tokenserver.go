package testservices

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// TokenServer is a real OAuth 2.0 authorization server, zitadel/oidc's
// OpenID provider (op), run in the test process on a loopback port: its
// token endpoint implements Token Exchange (RFC 8693) as that library
// does (grant type, subject_token and its type, client authentication
// with client_secret_basic, error codes), with the policy of an operator's
// server:
//   - a subject token is a JWT the test issuer signed (SubjectToken), for
//     the gateway's audience and not expired;
//   - the exchanged token is for Audience only, with scopes among Scopes:
//     another audience is invalid_target, another scope invalid_scope;
//   - an issued token is opaque (the provider's encrypted bearer token);
//     Subject tells whose it is, as the upstream's introspection would.
type TokenServer struct {
	// TokenURL is the token endpoint.
	TokenURL string
	// ClientID and ClientSecret are the gateway's client.
	ClientID, ClientSecret string
	// Audience is the upstream's, the one audience tokens are issued for.
	Audience string
	// Scopes are those a token may be issued with.
	Scopes []string

	provider *op.Provider
	key      []byte // the test issuer's HS256 key

	mu        sync.Mutex
	exchanges map[string]int // by subject
}

// gatewayAudience is the audience of the callers' tokens (the gateway's).
const gatewayAudience = "https://gateway.test/mcp"

// StartTokenServer starts the authorization server until the test ends.
func StartTokenServer(t testing.TB) *TokenServer {
	t.Helper()
	s := &TokenServer{ClientID: "gateway", ClientSecret: "gateway-secret-" + rand.Text(), Audience: "https://api.test",
		Scopes: []string{"issues:read", "issues:write"}, key: []byte(rand.Text() + rand.Text()), exchanges: map[string]int{}}
	var handler http.Handler = http.NotFoundHandler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	store := &exchangeStorage{
		Storage: storage.NewStorageWithClients(storage.NewUserStore(srv.URL),
			map[string]*storage.Client{s.ClientID: storage.WebClient(s.ClientID, s.ClientSecret)}),
		server: s,
	}
	var cryptoKey [32]byte
	copy(cryptoKey[:], rand.Text())
	p, err := op.NewOpenIDProvider(srv.URL, &op.Config{CryptoKey: cryptoKey}, store, op.WithAllowInsecure())
	if err != nil {
		t.Fatal(err)
	}
	s.provider, handler = p, p
	s.TokenURL = srv.URL + "/oauth/token"
	return s
}

// SubjectToken is a caller's access token from the test issuer: a JWT for
// the gateway's audience, valid for a minute.
func (s *TokenServer) SubjectToken(t testing.TB, subject string) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: s.key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(jwt.Claims{Subject: subject, Issuer: "https://idp.test", Audience: jwt.Audience{gatewayAudience},
		Expiry: jwt.NewNumericDate(time.Now().Add(time.Minute)), ID: rand.Text()}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Subject is whose a token this server issued is ("" for any other).
func (s *TokenServer) Subject(token string) string {
	plain, err := s.provider.Crypto().Decrypt(token)
	if err != nil {
		return ""
	}
	_, subject, ok := strings.Cut(plain, ":")
	if !ok {
		return ""
	}
	return subject
}

// Exchanges is how many exchanges the server granted for subject.
func (s *TokenServer) Exchanges(subject string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exchanges[subject]
}

// exchangeStorage is the library's example in-memory storage (clients,
// tokens, keys) with the token exchange policy above.
type exchangeStorage struct {
	*storage.Storage
	server *TokenServer
}

// VerifyExchangeSubjectToken implements op.TokenExchangeTokensVerifierStorage:
// the callers' tokens come from the test issuer, not from this provider.
func (e *exchangeStorage) VerifyExchangeSubjectToken(_ context.Context, token string, tokenType oidc.TokenType) (string, string, map[string]any, error) {
	if tokenType != oidc.AccessTokenType && tokenType != oidc.JWTTokenType {
		return "", "", nil, errors.New("unsupported subject token type")
	}
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.HS256})
	if err != nil {
		return "", "", nil, err
	}
	var claims jwt.Claims
	var all map[string]any
	if err := parsed.Claims(e.server.key, &claims, &all); err != nil {
		return "", "", nil, err
	}
	if err := claims.Validate(jwt.Expected{Issuer: "https://idp.test", AnyAudience: jwt.Audience{gatewayAudience}, Time: time.Now()}); err != nil {
		return "", "", nil, err
	}
	return claims.ID, claims.Subject, all, nil
}

// VerifyExchangeActorToken implements op.TokenExchangeTokensVerifierStorage:
// no actor tokens.
func (e *exchangeStorage) VerifyExchangeActorToken(context.Context, string, oidc.TokenType) (string, string, map[string]any, error) {
	return "", "", nil, errors.New("actor tokens are not accepted")
}

// ValidateTokenExchangeRequest implements op.TokenExchangeStorage.
func (e *exchangeStorage) ValidateTokenExchangeRequest(_ context.Context, req op.TokenExchangeRequest) error {
	s := e.server
	if req.GetRequestedTokenType() == "" {
		req.SetRequestedTokenType(oidc.AccessTokenType)
	}
	if req.GetRequestedTokenType() != oidc.AccessTokenType {
		return oidc.ErrInvalidRequest().WithDescription("only access tokens are issued")
	}
	if aud := req.GetAudience(); len(aud) != 1 || aud[0] != s.Audience {
		return oidc.ErrInvalidTarget().WithDescription("tokens are issued for %s only", s.Audience)
	}
	for _, r := range req.GetResourses() {
		if r != s.Audience {
			return oidc.ErrInvalidTarget().WithDescription("unknown resource")
		}
	}
	for _, scope := range req.GetScopes() {
		if !slices.Contains(s.Scopes, scope) {
			return oidc.ErrInvalidScope().WithDescription("scope %s is not granted", scope)
		}
	}
	s.mu.Lock()
	s.exchanges[req.GetSubject()]++
	s.mu.Unlock()
	return nil
}
