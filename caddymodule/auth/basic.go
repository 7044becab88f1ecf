package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"golang.org/x/crypto/bcrypt"

	"github.com/edgemcp/edgemcp/pipeline"
)

func init() {
	caddy.RegisterModule(Basic{})
}

// maxVerifiedCache bounds the cache of verified user/password pairs, and
// maxRefusedCache that of refused ones.
const (
	maxVerifiedCache = 1000
	maxRefusedCache  = 10000
)

// Basic authenticates HTTP Basic credentials against bcrypt hashes, as
// Caddy's basic_auth does (hashes made with `caddy hash-password`).
type Basic struct {
	// Realm is sent in the Basic challenge; default "edgemcp".
	Realm string `json:"realm,omitempty"`
	// Users maps user names to their bcrypt hash and scopes.
	Users []BasicUser `json:"users,omitempty"`

	users map[string]BasicUser
	// A dummy hash compared when the user is unknown, so that the time
	// taken does not tell known from unknown user names.
	dummy []byte
	// bcrypt costs tens of milliseconds by design; an MCP client sends the
	// same credentials with every request, so pairs already verified are
	// remembered, keyed by an HMAC under a per-process random key (the
	// password itself is never kept). Refused pairs are remembered too: a
	// client retrying a wrong password, or a flood of one bad pair, would
	// otherwise cost a bcrypt run per request. Each new guess still pays
	// bcrypt, which is the point of it.
	cacheKey []byte
	verified *pairSet
	refused  *pairSet
}

// pairSet is a bounded set of HMAC'd credential pairs; when full, an
// arbitrary entry makes room.
type pairSet struct {
	mu    sync.Mutex
	limit int
	m     map[[sha256.Size]byte]struct{}
}

func newPairSet(limit int) *pairSet {
	return &pairSet{limit: limit, m: make(map[[sha256.Size]byte]struct{})}
}

func (p *pairSet) has(k [sha256.Size]byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.m[k]
	return ok
}

func (p *pairSet) add(k [sha256.Size]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.m) >= p.limit {
		for old := range p.m {
			delete(p.m, old)
			break
		}
	}
	p.m[k] = struct{}{}
}

// BasicUser is one account.
type BasicUser struct {
	Username string   `json:"username"`
	Password string   `json:"password"` // bcrypt hash
	Scopes   []string `json:"scopes,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (Basic) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.auth.basic", New: func() caddy.Module { return new(Basic) }}
}

// Provision checks the hashes.
func (b *Basic) Provision(caddy.Context) error {
	if b.Realm == "" {
		b.Realm = "edgemcp"
	}
	if len(b.Users) == 0 {
		return fmt.Errorf("basic: no users")
	}
	repl := caddy.NewReplacer()
	b.users = make(map[string]BasicUser, len(b.Users))
	for _, u := range b.Users {
		hash, err := bcryptHash(repl.ReplaceKnown(u.Password, ""))
		if err != nil {
			return fmt.Errorf("basic: user %q: %v", u.Username, err)
		}
		u.Password = string(hash)
		b.users[u.Username] = u
	}
	dummy, err := bcrypt.GenerateFromPassword([]byte("edgemcp dummy password"), bcrypt.DefaultCost)
	if err != nil {
		return err
	}
	b.dummy = dummy
	b.cacheKey = make([]byte, 32)
	if _, err := rand.Read(b.cacheKey); err != nil {
		return err
	}
	b.verified, b.refused = newPairSet(maxVerifiedCache), newPairSet(maxRefusedCache)
	return nil
}

// bcryptHash accepts a bcrypt hash as is or base64-encoded (Caddy's older form).
func bcryptHash(s string) ([]byte, error) {
	if _, err := bcrypt.Cost([]byte(s)); err == nil {
		return []byte(s), nil
	}
	if raw, err := base64.StdEncoding.DecodeString(s); err == nil {
		if _, err := bcrypt.Cost(raw); err == nil {
			return raw, nil
		}
	}
	return nil, fmt.Errorf("password is not a bcrypt hash (make one with `caddy hash-password`)")
}

// Authenticate checks the Authorization: Basic credentials.
func (b *Basic) Authenticate(_ context.Context, req *pipeline.AuthRequest) (*pipeline.Identity, error) {
	scheme, payload, ok := strings.Cut(strings.TrimSpace(req.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return nil, pipeline.NoCredentials()
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(payload))
	if err != nil {
		return nil, pipeline.InvalidCredentials("malformed basic credentials")
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	if !ok {
		return nil, pipeline.InvalidCredentials("malformed basic credentials")
	}
	if !b.check(user, pass) {
		// One message for unknown user and wrong password.
		return nil, pipeline.InvalidCredentials("wrong user name or password")
	}
	u := b.users[user]
	claims := map[string]any{"auth_method": "basic"}
	if len(u.Scopes) > 0 {
		claims["scope"] = strings.Join(u.Scopes, " ")
	}
	return &pipeline.Identity{Subject: u.Username, Claims: claims}, nil
}

func (b *Basic) check(user, pass string) bool {
	mac := hmac.New(sha256.New, b.cacheKey)
	mac.Write([]byte(user))
	mac.Write([]byte{0})
	mac.Write([]byte(pass))
	var key [sha256.Size]byte
	copy(key[:], mac.Sum(nil))

	switch {
	case b.verified.has(key):
		return true
	case b.refused.has(key):
		return false
	}
	u, known := b.users[user]
	hash := b.dummy
	if known {
		hash = []byte(u.Password)
	}
	// bcrypt compares in constant time.
	if bcrypt.CompareHashAndPassword(hash, []byte(pass)) != nil || !known {
		b.refused.add(key)
		return false
	}
	b.verified.add(key)
	return true
}

// Challenge is the WWW-Authenticate challenge of a refused request, so that
// browsers and HTTP clients know to send Basic credentials.
func (b *Basic) Challenge() string { return fmt.Sprintf("Basic realm=%q, charset=\"UTF-8\"", b.Realm) }

// UnmarshalCaddyfile reads
//
//	basic {
//		realm <realm>
//		<username> <bcrypt hash> [<scope>...]
//	}
func (b *Basic) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the plugin name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		if d.Val() == "realm" {
			if !d.AllArgs(&b.Realm) {
				return d.Errf("basic: realm needs one value")
			}
			continue
		}
		u := BasicUser{Username: d.Val()}
		if !d.NextArg() {
			return d.Errf("basic: user %q: missing bcrypt hash (make one with `caddy hash-password`)", u.Username)
		}
		u.Password = d.Val()
		u.Scopes = d.RemainingArgs()
		if !strings.Contains(u.Password, "{") {
			if _, err := bcryptHash(u.Password); err != nil {
				return d.Errf("basic: user %q: %v", u.Username, err)
			}
		}
		for _, other := range b.Users {
			if other.Username == u.Username {
				return d.Errf("basic: user %q declared twice", u.Username)
			}
		}
		b.Users = append(b.Users, u)
	}
	if len(b.Users) == 0 {
		return d.Errf("basic: needs at least one `<username> <bcrypt hash>` line")
	}
	return nil
}

// Interface guards.
var (
	_ caddy.Provisioner     = (*Basic)(nil)
	_ caddyfile.Unmarshaler = (*Basic)(nil)
	_ pipeline.AuthProvider = (*Basic)(nil)
)
