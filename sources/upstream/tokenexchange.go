package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/edgemcp/edgemcp/internal/netguard"
	"github.com/edgemcp/edgemcp/pipeline"
)

// OAuth 2.0 Token Exchange (RFC 8693) names.
const (
	grantTokenExchange  = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeAccess     = "urn:ietf:params:oauth:token-type:access_token"
	TokenTypeJWT        = "urn:ietf:params:oauth:token-type:jwt"
	maxExchangeResponse = 64 << 10
	// maxExchangedTokens bounds the cache: one entry per caller token.
	maxExchangedTokens = 10000
)

// TokenExchange sends each caller's own identity upstream (`credential
// token_exchange { ... }`): the caller's verified bearer token is
// exchanged at the operator's authorization server (RFC 8693) for a token
// scoped to the upstream (audience, resource, scopes), which is sent as the
// upstream's bearer token. The caller's own token never reaches the
// upstream. An exchanged token is kept for its caller until shortly before
// it expires, and concurrent calls of one caller make one exchange.
type TokenExchange struct {
	endpoint     string
	clientID     string
	clientSecret string
	clientAuth   string // "basic" (client_secret_basic) or "post" (client_secret_post)
	subjectType  string // TokenTypeAccess or TokenTypeJWT
	audience     []string
	resource     []string
	scopes       []string
	client       *http.Client
	now          func() time.Time

	mu      sync.Mutex
	tokens  map[[32]byte]exchanged
	flights map[[32]byte]*exchange
}

// exchanged is a token the authorization server issued, and until when
// the gateway uses it.
type exchanged struct {
	token string
	until time.Time
}

// exchange is one request in flight; the calls that need its answer wait
// for done.
type exchange struct {
	done  chan struct{}
	token string
	err   error
}

// TokenExchangeConfig is what `credential token_exchange` sets.
type TokenExchangeConfig struct {
	TokenURL, ClientID, ClientSecret string
	// ClientAuth is "basic" (the default) or "post".
	ClientAuth string
	// SubjectTokenType is "access_token" (the default) or "jwt".
	SubjectTokenType string
	Audience         []string
	Resource         []string
	Scopes           []string
	Timeout          time.Duration
}

// NewTokenExchange checks cfg and returns the credential. The token URL
// must be https (http only on a loopback address): the request carries the
// caller's token and the client secret.
func NewTokenExchange(cfg TokenExchangeConfig) (*TokenExchange, error) {
	u, err := url.Parse(cfg.TokenURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && loopback(u.Hostname()))) {
		return nil, fmt.Errorf("credential token_exchange: token_url must be an https URL (http only on a loopback address)")
	}
	if u.User != nil {
		return nil, fmt.Errorf("credential token_exchange: token_url: put the client's credentials in client_id and client_secret, not in the URL")
	}
	if cfg.ClientID == "" {
		return nil, fmt.Errorf("credential token_exchange: client_id is required")
	}
	if len(cfg.Audience) == 0 && len(cfg.Resource) == 0 {
		// Without a target the server may issue a token good anywhere
		// the caller's is: the point is a token for this upstream only.
		return nil, fmt.Errorf("credential token_exchange: name the upstream with audience or resource")
	}
	for _, r := range cfg.Resource {
		if ru, err := url.Parse(r); err != nil || !ru.IsAbs() || ru.Fragment != "" {
			return nil, fmt.Errorf("credential token_exchange: resource %q: want an absolute URI without a fragment (RFC 8707)", r)
		}
	}
	te := &TokenExchange{endpoint: u.String(), clientID: cfg.ClientID, clientSecret: cfg.ClientSecret,
		audience: cfg.Audience, resource: cfg.Resource, scopes: cfg.Scopes, now: time.Now,
		tokens: map[[32]byte]exchanged{}, flights: map[[32]byte]*exchange{}}
	switch cfg.ClientAuth {
	case "", "basic":
		te.clientAuth = "basic"
	case "post":
		te.clientAuth = "post"
	default:
		return nil, fmt.Errorf("credential token_exchange: client_auth %q: want basic or post", cfg.ClientAuth)
	}
	switch cfg.SubjectTokenType {
	case "", "access_token":
		te.subjectType = TokenTypeAccess
	case "jwt":
		te.subjectType = TokenTypeJWT
	default:
		return nil, fmt.Errorf("credential token_exchange: subject_token_type %q: want access_token or jwt", cfg.SubjectTokenType)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	// The request carries the caller's token and the client secret: a
	// redirect elsewhere would re-post both (netguard.StayOnOrigin).
	te.client = &http.Client{Transport: Transport, Timeout: timeout, CheckRedirect: netguard.StayOnOrigin}
	return te, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Apply implements Credential.
func (te *TokenExchange) Apply(ctx context.Context, req *http.Request, call *pipeline.Call) error {
	if call == nil || call.Identity == nil {
		return &pipeline.PublicError{Public: "credential token_exchange: the call has no verified identity (add an auth provider)"}
	}
	var h string
	if call.Request != nil {
		h = call.Request.Header.Get("Authorization")
	}
	scheme, subject, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || subject == "" {
		return &pipeline.PublicError{Public: "credential token_exchange: the call carries no bearer token to exchange"}
	}
	token, err := te.token(ctx, call.Identity, subject)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return nil
}

// Reserves implements Credential.
func (*TokenExchange) Reserves() Reserved { return Reserved{Headers: []string{"Authorization"}} }

// DependsOnCaller implements CallerDependent.
func (*TokenExchange) DependsOnCaller() {}

// token is the exchanged token for the caller's subject token: the one
// kept, else the answer of the exchange in flight for it, else a new
// exchange's. Keyed by the caller's identity and token together: a caller
// who comes with a new token (another login, other scopes) gets a token
// exchanged from that one.
func (te *TokenExchange) token(ctx context.Context, id *pipeline.Identity, subject string) (string, error) {
	key := sha256.Sum256([]byte(id.Provider + "\x00" + id.Subject + "\x00" + subject))
	te.mu.Lock()
	if t, ok := te.tokens[key]; ok && te.now().Before(t.until) {
		te.mu.Unlock()
		return t.token, nil
	}
	x, inFlight := te.flights[key]
	if !inFlight {
		x = &exchange{done: make(chan struct{})}
		te.flights[key] = x
	}
	te.mu.Unlock()
	if !inFlight {
		// The exchange serves every call waiting for it: one caller's
		// cancellation does not cancel it (the client's timeout bounds it).
		go te.run(context.WithoutCancel(ctx), key, subject, x)
	}
	select {
	case <-x.done:
		return x.token, x.err
	case <-ctx.Done():
		return "", Failed("credential token_exchange: the call ended before the token exchange answered", ctx.Err())
	}
}

// run makes one exchange and keeps its token.
func (te *TokenExchange) run(ctx context.Context, key [32]byte, subject string, x *exchange) {
	token, life, err := te.exchange(ctx, subject)
	te.mu.Lock()
	delete(te.flights, key)
	if err == nil && life > 0 {
		te.keep(key, exchanged{token: token, until: te.now().Add(life - early(life))})
	}
	te.mu.Unlock()
	x.token, x.err = token, err
	close(x.done)
}

// early is how long before its expiry an exchanged token is replaced:
// a fifth of its life, at most a minute, so that it does not expire on
// its way to the upstream.
func early(life time.Duration) time.Duration { return min(life/5, time.Minute) }

// keep stores t under key (te.mu held), making room by dropping expired
// tokens, else any one, when the cache is full.
func (te *TokenExchange) keep(key [32]byte, t exchanged) {
	if len(te.tokens) >= maxExchangedTokens {
		now := te.now()
		for k, old := range te.tokens {
			if !now.Before(old.until) {
				delete(te.tokens, k)
			}
		}
		for k := range te.tokens {
			if len(te.tokens) < maxExchangedTokens {
				break
			}
			delete(te.tokens, k)
		}
	}
	te.tokens[key] = t
}

// tokenResponse is a token endpoint's answer (RFC 8693 §2.2.1, RFC 6749
// §5.2 for an error).
type tokenResponse struct {
	AccessToken     string          `json:"access_token"`
	IssuedTokenType string          `json:"issued_token_type"`
	TokenType       string          `json:"token_type"`
	ExpiresIn       json.Number     `json:"expires_in"`
	Error           string          `json:"error"`
	Description     json.RawMessage `json:"error_description"`
}

// errorCode is what RFC 6749 §5.2 allows an error code to be.
var errorCode = regexp.MustCompile(`^[\x20-\x21\x23-\x5B\x5D-\x7E]{1,64}$`)

// exchange asks the authorization server for a token for subject, and
// returns it with its life (0: unknown, then it is not kept).
func (te *TokenExchange) exchange(ctx context.Context, subject string) (string, time.Duration, error) {
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"subject_token":        {subject},
		"subject_token_type":   {te.subjectType},
		"requested_token_type": {TokenTypeAccess},
	}
	for _, a := range te.audience {
		form.Add("audience", a)
	}
	for _, r := range te.resource {
		form.Add("resource", r)
	}
	if len(te.scopes) > 0 {
		form.Set("scope", strings.Join(te.scopes, " "))
	}
	if te.clientAuth == "post" || te.clientSecret == "" {
		form.Set("client_id", te.clientID)
	}
	if te.clientAuth == "post" && te.clientSecret != "" {
		form.Set("client_secret", te.clientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, te.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, Failed("credential token_exchange: the token request cannot be made", nil)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if te.clientAuth == "basic" && te.clientSecret != "" {
		// RFC 6749 §2.3.1: each part form-encoded before the basic scheme.
		pair := url.QueryEscape(te.clientID) + ":" + url.QueryEscape(te.clientSecret)
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(pair)))
	}
	secrets := []string{subject, te.clientSecret, url.QueryEscape(subject), url.QueryEscape(te.clientSecret)}
	res, err := te.client.Do(req)
	if err != nil {
		return "", 0, Failed("credential token_exchange: the token endpoint is not reachable", scrubError(withoutQuery(err), secrets...))
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxExchangeResponse+1))
	if err != nil || len(body) > maxExchangeResponse {
		return "", 0, Failed("credential token_exchange: the token endpoint's answer is cut off or too large", nil)
	}
	var tr tokenResponse
	jsonErr := json.Unmarshal(body, &tr)
	if res.StatusCode != http.StatusOK {
		return "", 0, refusal(res, tr, jsonErr, secrets)
	}
	switch {
	case jsonErr != nil || tr.AccessToken == "":
		return "", 0, Failed("credential token_exchange: the token endpoint's answer holds no access_token", nil)
	case !strings.EqualFold(tr.TokenType, "Bearer"):
		return "", 0, Failed(fmt.Sprintf("credential token_exchange: the token endpoint issued a token of type %q, not a bearer token", clip(tr.TokenType)), nil)
	case tr.IssuedTokenType != "" && tr.IssuedTokenType != TokenTypeAccess && tr.IssuedTokenType != TokenTypeJWT:
		return "", 0, Failed(fmt.Sprintf("credential token_exchange: the token endpoint issued a %q, not an access token", clip(tr.IssuedTokenType)), nil)
	}
	var life time.Duration
	if n, err := tr.ExpiresIn.Int64(); err == nil && n > 0 {
		life = time.Duration(min(n, int64(24*time.Hour/time.Second))) * time.Second
	}
	return tr.AccessToken, life, nil
}

// ExchangeRefused is a token endpoint's refusal: the caller sees its
// error code (RFC 6749 §5.2: invalid_request, invalid_grant,
// invalid_target, ...), never a token; the description goes to the debug
// log, with the caller's token and the client secret cut out.
type ExchangeRefused struct {
	Code   string // "" when the answer had none
	Status int
	cause  error
}

func (e *ExchangeRefused) SafeMessage() string {
	if e.Code == "" {
		return fmt.Sprintf("credential token_exchange: the token endpoint answered HTTP %d", e.Status)
	}
	return "credential token_exchange: the authorization server refused the exchange: " + e.Code
}

func (e *ExchangeRefused) Error() string {
	if e.cause != nil {
		return e.SafeMessage() + ": " + e.cause.Error()
	}
	return e.SafeMessage()
}

func (e *ExchangeRefused) Unwrap() error { return e.cause }

// ErrorMeta implements pipeline.MetaError: the code, for a client that
// acts on it (invalid_grant: the caller signs in again).
func (e *ExchangeRefused) ErrorMeta() map[string]any {
	m := map[string]any{"status": e.Status}
	if e.Code != "" {
		m["error"] = e.Code
	}
	return map[string]any{"edgemcp/token_exchange": m}
}

func refusal(res *http.Response, tr tokenResponse, jsonErr error, secrets []string) error {
	e := &ExchangeRefused{Status: res.StatusCode}
	if jsonErr == nil && errorCode.MatchString(tr.Error) {
		e.Code = tr.Error
	}
	var desc string
	if json.Unmarshal(tr.Description, &desc) == nil && desc != "" {
		e.cause = errors.New(clip(string(scrub([]byte(desc), secrets))))
	}
	return e
}

// clip bounds a text of the token endpoint's that is shown or logged.
func clip(s string) string {
	if len(s) > 200 {
		return strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}
