package auth

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// maxVerifiedTokens bounds the verified-token cache.
const maxVerifiedTokens = 10000

// tokenCache remembers tokens that passed verification until they expire.
// An MCP client sends the same token with every request, and verifying a
// signature costs 0.1–0.3 ms (ES256/RS256); a hit costs a hash and a
// decode. Tokens are keyed by their SHA-256, so the cache holds no token.
// Trade-off, documented: a token stays accepted until its exp even if its
// key leaves the JWKS meanwhile (JWTs are not revocable anyway).
type tokenCache struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]cachedToken
}

type cachedToken struct {
	subject string
	claims  []byte // JSON: every hit decodes a fresh copy, so no caller can alter another's identity
	until   time.Time
}

func newTokenCache() *tokenCache {
	return &tokenCache{entries: make(map[[sha256.Size]byte]cachedToken)}
}

func (c *tokenCache) get(key [sha256.Size]byte, now time.Time) (*pipeline.Identity, bool) {
	c.mu.Lock()
	e, ok := c.entries[key]
	if ok && now.After(e.until) {
		delete(c.entries, key)
		ok = false
	}
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	claims := map[string]any{}
	if json.Unmarshal(e.claims, &claims) != nil {
		return nil, false
	}
	return &pipeline.Identity{Subject: e.subject, Claims: claims}, true
}

func (c *tokenCache) put(key [sha256.Size]byte, id *pipeline.Identity, until time.Time) {
	raw, err := json.Marshal(id.Claims)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxVerifiedTokens {
		for k := range c.entries { // drop an arbitrary entry
			delete(c.entries, k)
			break
		}
	}
	c.entries[key] = cachedToken{subject: id.Subject, claims: raw, until: until}
}
