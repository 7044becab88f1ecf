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
type jwksCache struct {
	url         string
	client      *http.Client
	minInterval time.Duration
	maxAge      time.Duration

	mu          sync.Mutex // serializes fetches; guards the fields below
	keys        []jose.JSONWebKey
	fetched     time.Time // last successful fetch
	lastAttempt time.Time // last fetch of any kind
	lastKidRun  time.Time // last fetch caused by an unknown key id
	lastErr     error

	fetches atomic.Int64 // fetch attempts, for tests and debugging
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
	defer c.mu.Unlock()
	stale := c.fetched.IsZero() || time.Since(c.fetched) > c.maxAge
	if stale {
		// After a failed fetch, retry no more often than every few
		// seconds, so a down identity provider is not hammered.
		if err := c.refreshLocked(ctx, &c.lastAttempt, min(c.minInterval, failureBackoff)); err != nil && c.keys == nil {
			return nil, err
		}
	}
	if k := findKey(c.keys, kid); k != nil {
		return k, nil
	}
	if stale {
		return nil, errUnknownKey // just fetched: the key does not exist
	}
	// An unknown kid may mean the provider rotated keys: refresh, bounded.
	if err := c.refreshLocked(ctx, &c.lastKidRun, c.minInterval); err != nil {
		return nil, errUnknownKey
	}
	if k := findKey(c.keys, kid); k != nil {
		return k, nil
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

// refreshLocked fetches the set unless *last (the previous fetch of this
// kind) is less than interval ago. c.mu is held.
func (c *jwksCache) refreshLocked(ctx context.Context, last *time.Time, interval time.Duration) error {
	if !last.IsZero() && time.Since(*last) < interval {
		if c.lastErr != nil {
			return c.lastErr
		}
		return errThrottled
	}
	now := time.Now()
	*last, c.lastAttempt = now, now
	c.fetches.Add(1)
	keys, err := c.fetch(ctx)
	c.lastErr = err
	if err != nil {
		return err
	}
	c.keys, c.fetched = keys, time.Now()
	return nil
}

func (c *jwksCache) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jwksTimeout)
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
