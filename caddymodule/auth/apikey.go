package auth

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/edgemcp/edgemcp/pipeline"
)

func init() {
	caddy.RegisterModule(APIKey{})
}

// minKeyLength refuses keys short enough to guess.
const minKeyLength = 16

// APIKey authenticates a static key sent in a header (default X-API-Key) or
// as `Authorization: Bearer <key>` when the header is Authorization.
type APIKey struct {
	// Header carries the key; "Authorization" means the Bearer scheme.
	Header string `json:"header,omitempty"`
	// Keys are given in the config; {env.X} placeholders are expanded.
	Keys []APIKeyEntry `json:"keys,omitempty"`
	// KeyFile names a file of hashed keys, one per line:
	// `sha256:<hex> <subject> [<scope>...]`; blank lines and # comments
	// are ignored.
	KeyFile string `json:"key_file,omitempty"`

	entries []keyEntry
}

// APIKeyEntry is one key with who it stands for.
type APIKeyEntry struct {
	Key     string   `json:"key"`
	Subject string   `json:"subject,omitempty"`
	Scopes  []string `json:"scopes,omitempty"`
}

// keyEntry is a key as kept in memory: only its SHA-256 digest. Keys are
// random strings of high entropy, so a fast hash is enough (bcrypt would
// cost ~50 ms per request) and comparing fixed-size digests makes
// subtle.ConstantTimeCompare meaningful whatever length the caller sends.
type keyEntry struct {
	digest  [sha256.Size]byte
	subject string
	scopes  []string
}

// CaddyModule returns the Caddy module information.
func (APIKey) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.auth.api_key", New: func() caddy.Module { return new(APIKey) }}
}

// Provision expands placeholders, hashes inline keys and reads the key file.
func (a *APIKey) Provision(caddy.Context) error {
	if a.Header == "" {
		a.Header = "X-API-Key"
	}
	repl := caddy.NewReplacer()
	a.entries = a.entries[:0]
	for i, k := range a.Keys {
		key := repl.ReplaceKnown(k.Key, "")
		if len(key) < minKeyLength {
			// The message names the entry, never the key.
			return fmt.Errorf("api_key: key #%d is empty or shorter than %d characters (is its environment variable set?)", i+1, minKeyLength)
		}
		subject := k.Subject
		if subject == "" {
			subject = fmt.Sprintf("key-%d", i+1)
		}
		a.entries = append(a.entries, keyEntry{digest: sha256.Sum256([]byte(key)), subject: subject, scopes: k.Scopes})
	}
	if a.KeyFile != "" {
		fromFile, err := readKeyFile(repl.ReplaceKnown(a.KeyFile, ""))
		if err != nil {
			return err
		}
		a.entries = append(a.entries, fromFile...)
	}
	if len(a.entries) == 0 {
		return fmt.Errorf("api_key: no keys (use key or key_file)")
	}
	return nil
}

// readKeyFile reads `sha256:<hex> <subject> [<scope>...]` lines.
func readKeyFile(path string) ([]keyEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("api_key: key_file: %v", err)
	}
	defer f.Close()
	var out []keyEntry
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		hexDigest, ok := strings.CutPrefix(fields[0], "sha256:")
		raw, err := hex.DecodeString(hexDigest)
		if !ok || err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("api_key: %s:%d: want `sha256:<64 hex digits> <subject> [<scope>...]`", path, line)
		}
		if len(fields) < 2 {
			return nil, fmt.Errorf("api_key: %s:%d: missing subject after the hash", path, line)
		}
		e := keyEntry{subject: fields[1], scopes: fields[2:]}
		copy(e.digest[:], raw)
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("api_key: key_file %s: %v", path, err)
	}
	return out, nil
}

// Authenticate finds the key among the configured ones. Every entry is
// compared, in constant time, whether or not an earlier one matched, so the
// time taken says nothing about which key (or how much of one) was right.
func (a *APIKey) Authenticate(_ context.Context, req *pipeline.AuthRequest) (*pipeline.Identity, error) {
	presented, ok := a.credential(req.Header)
	if !ok {
		return nil, pipeline.NoCredentials()
	}
	digest := sha256.Sum256([]byte(presented))
	match := -1
	for i := range a.entries {
		if subtle.ConstantTimeCompare(digest[:], a.entries[i].digest[:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return nil, pipeline.InvalidCredentials("unknown API key")
	}
	e := a.entries[match]
	claims := map[string]any{"auth_method": "api_key"}
	if len(e.scopes) > 0 {
		claims["scope"] = strings.Join(e.scopes, " ")
	}
	return &pipeline.Identity{Subject: e.subject, Claims: claims}, nil
}

func (a *APIKey) credential(h http.Header) (string, bool) {
	if strings.EqualFold(a.Header, "Authorization") {
		return bearerToken(h)
	}
	v := strings.TrimSpace(h.Get(a.Header))
	return v, v != ""
}

// bearerToken reads `Authorization: Bearer <token>` (scheme case-insensitive).
func bearerToken(h http.Header) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}

// UnmarshalCaddyfile reads
//
//	api_key {
//		header <name>                 # default X-API-Key; Authorization = Bearer
//		key <key> [{ subject <id>; scope <s...> }]
//		key_file <path>
//	}
func (a *APIKey) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the plugin name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch sub := d.Val(); sub {
		case "header":
			if !d.AllArgs(&a.Header) {
				return d.Errf("api_key: header needs one header name")
			}
		case "key_file":
			if !d.AllArgs(&a.KeyFile) {
				return d.Errf("api_key: key_file needs one path")
			}
		case "key":
			var k APIKeyEntry
			if !d.NextArg() {
				return d.Errf("api_key: key needs a value (write it as {env.NAME} to keep it out of the file)")
			}
			k.Key = d.Val()
			if d.NextArg() {
				return d.Errf("api_key: key takes one value; put subject and scopes in a block")
			}
			for nesting := d.Nesting(); d.NextBlock(nesting); {
				switch d.Val() {
				case "subject":
					if !d.AllArgs(&k.Subject) {
						return d.Errf("api_key: subject needs one value")
					}
				case "scope":
					scopes := d.RemainingArgs()
					if len(scopes) == 0 {
						return d.Errf("api_key: scope needs at least one value")
					}
					k.Scopes = append(k.Scopes, scopes...)
				default:
					return d.Errf("api_key: key: unrecognized sub-directive %q (want subject, scope)", d.Val())
				}
			}
			a.Keys = append(a.Keys, k)
		default:
			return d.Errf("api_key: unrecognized sub-directive %q (want header, key, key_file)", sub)
		}
	}
	if len(a.Keys) == 0 && a.KeyFile == "" {
		return d.Errf("api_key: needs at least one key or a key_file")
	}
	return nil
}

// Interface guards.
var (
	_ caddy.Provisioner     = (*APIKey)(nil)
	_ caddyfile.Unmarshaler = (*APIKey)(nil)
	_ pipeline.AuthProvider = (*APIKey)(nil)
)
