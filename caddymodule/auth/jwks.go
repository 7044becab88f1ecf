package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Bounds on the identity provider's key set endpoint.
const (
	jwksTimeout  = 10 * time.Second
	jwksMaxBytes = 1 << 20
	// failureBackoff spaces retries after a failed fetch.
	failureBackoff = 5 * time.Second
)

// jwksCache holds the public keys of a JWKS URL. Keys are fetched on first
// use, again when older than maxAge, and again when a token names a key id
// the set does not have (the identity provider rotated its keys) — but never
// more than once per minInterval, so tokens with made-up key ids cannot turn
// the gateway into a load generator against the identity provider.
//
// A fetch runs outside the lock, once however many callers need it (single
// flight): a token with an unknown key id waits for its refresh, while tokens
// whose key is in the set are verified at once, never queued behind it.
type jwksCache struct {
	url         string
	client      *http.Client
	minInterval time.Duration
	maxAge      time.Duration

	mu          sync.Mutex // guards the fields below, never held across a fetch
	keys        []jose.JSONWebKey
	fetched     time.Time // last successful fetch
	lastAttempt time.Time // last fetch of any kind
	lastKidRun  time.Time // last fetch caused by an unknown key id
	lastErr     error
	flight      *jwksFlight // the fetch under way, if any

	fetches atomic.Int64 // fetch attempts, for tests and debugging
}

// jwksFlight is one fetch; done closes when it has finished.
type jwksFlight struct {
	done chan struct{}
	err  error
}

func newJWKSCache(rawURL string, minInterval, maxAge time.Duration) (*jwksCache, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("jwt: jwks_url %q is not an http(s) URL", rawURL)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		// Keys fetched in clear text could be swapped by anyone on the path.
		return nil, fmt.Errorf("jwt: jwks_url must use https (http is allowed only for loopback hosts)")
	}
	return &jwksCache{
		url: rawURL,
		client: &http.Client{Timeout: jwksTimeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
			// A redirect must not downgrade the key set to clear text.
			if len(via) >= 3 || (req.URL.Scheme != "https" && !isLoopback(req.URL.Hostname())) {
				return errors.New("JWKS redirect refused")
			}
			return nil
		}},
		minInterval: minInterval,
		maxAge:      maxAge,
	}, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// errUnknownKey is returned when no key of the set has the token's key id,
// even after the refresh this lookup was allowed.
var errUnknownKey = fmt.Errorf("unknown signing key")

// key returns the key with id kid ("" matches a set of exactly one key).
func (c *jwksCache) key(ctx context.Context, kid string) (*jose.JSONWebKey, error) {
	c.mu.Lock()
	stale := c.fetched.IsZero() || time.Since(c.fetched) > c.maxAge
	if !stale {
		if k := findKey(c.keys, kid); k != nil {
			c.mu.Unlock()
			return k, nil
		}
	}
	var f *jwksFlight
	var err error
	if stale {
		// After a failed fetch, retry no more often than every few
		// seconds, so a down identity provider is not hammered.
		f, err = c.startLocked(&c.lastAttempt, min(c.minInterval, failureBackoff))
	} else {
		// An unknown kid may mean the provider rotated keys: refresh, bounded.
		f, err = c.startLocked(&c.lastKidRun, c.minInterval)
	}
	c.mu.Unlock()
	if f != nil {
		select {
		case <-f.done:
			err = f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c.mu.Lock()
	k, haveKeys := findKey(c.keys, kid), c.keys != nil
	c.mu.Unlock()
	switch {
	case k != nil:
		return k, nil // a failed refresh leaves the previous set in use
	case !haveKeys && err != nil:
		return nil, err // no set at all: the provider's failure, not the caller's
	}
	return nil, errUnknownKey
}

func findKey(keys []jose.JSONWebKey, kid string) *jose.JSONWebKey {
	if kid == "" {
		if len(keys) == 1 {
			return &keys[0]
		}
		return nil
	}
	for i := range keys {
		if keys[i].KeyID == kid {
			return &keys[i]
		}
	}
	return nil
}

// errThrottled: a refresh was due but the interval since the last one of
// its kind has not passed.
var errThrottled = errors.New("key set refresh throttled")

// startLocked joins the fetch under way, or starts one unless *last (the
// previous fetch of this kind) is less than interval ago; then it returns no
// flight and why. c.mu is held.
func (c *jwksCache) startLocked(last *time.Time, interval time.Duration) (*jwksFlight, error) {
	if c.flight != nil {
		return c.flight, nil
	}
	if !last.IsZero() && time.Since(*last) < interval {
		if c.lastErr != nil {
			return nil, c.lastErr
		}
		return nil, errThrottled
	}
	now := time.Now()
	*last, c.lastAttempt = now, now
	c.fetches.Add(1)
	f := &jwksFlight{done: make(chan struct{})}
	c.flight = f
	go func() {
		// Not tied to the first caller's context: the others wait too.
		keys, err := c.fetch(context.Background())
		c.mu.Lock()
		c.lastErr, c.flight = err, nil
		if err == nil {
			c.keys, c.fetched = keys, time.Now()
		}
		c.mu.Unlock()
		f.err = err
		close(f.done)
	}()
	return f, nil
}

func (c *jwksCache) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(ctx, jwksTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching JWKS: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching JWKS: status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, jwksMaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("fetching JWKS: %w", err)
	}
	if len(body) > jwksMaxBytes {
		return nil, fmt.Errorf("fetching JWKS: larger than %d bytes", jwksMaxBytes)
	}
	return parseKeySet(body)
}

// parseKeySet keeps the public signing keys of a JWKS document. Symmetric
// and private keys are dropped: a shared secret in a key set would let
// anyone who reads the set forge tokens.
func parseKeySet(body []byte) ([]jose.JSONWebKey, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("invalid JWKS: %v", err)
	}
	keys := make([]jose.JSONWebKey, 0, len(set.Keys))
	for _, k := range set.Keys {
		if !k.Valid() || !k.IsPublic() || (k.Use != "" && k.Use != "sig") {
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("JWKS has no public signing keys")
	}
	return keys, nil
}
