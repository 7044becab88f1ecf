package upstream

import (
	"context"
	"net/http"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/edgemcp/edgemcp/internal/netguard"
	"github.com/edgemcp/edgemcp/pipeline"
)

// OAuth2 gets a token with the client-credentials grant (RFC 6749 §4.4)
// and sends it as a bearer token. The token is kept until shortly before
// it expires and shared by every call of the source.
type OAuth2 struct {
	tokens oauth2.TokenSource
	secret string // the client secret, kept out of the cause a failure logs
}

// NewOAuth2 returns the credential; token requests time out after timeout.
func NewOAuth2(tokenURL, clientID, clientSecret string, scopes []string, timeout time.Duration) *OAuth2 {
	cfg := clientcredentials.Config{ClientID: clientID, ClientSecret: clientSecret, TokenURL: tokenURL, Scopes: scopes}
	// The token source outlives any one call, so it gets its own context,
	// carrying a client that bounds each token request. A token request
	// carries the client secret (in its body or a basic Authorization), and
	// Go's client re-posts both on a 307 or 308 to another origin: the
	// client stays on the token endpoint's.
	client := &http.Client{Timeout: timeout, CheckRedirect: netguard.StayOnOrigin}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, client)
	return &OAuth2{tokens: oauth2.ReuseTokenSource(nil, cfg.TokenSource(ctx)), secret: clientSecret}
}

func (o *OAuth2) Apply(_ context.Context, req *http.Request, _ *pipeline.Call) error {
	tok, err := o.tokens.Token()
	if err != nil {
		// The token endpoint's answer may quote the client id; say less.
		// The cause goes to the debug log: without the secret, should the
		// endpoint's answer quote the request.
		return Failed("credential oauth2: no token from the token endpoint", scrubError(err, o.secret))
	}
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return nil
}

func (*OAuth2) Reserves() Reserved { return Reserved{Headers: []string{"Authorization"}} }
