package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/edgemcp/edgemcp/pipeline"
)

func init() {
	caddy.RegisterModule(JWT{})
}

const (
	maxTokenBytes          = 8 << 10
	minSecretBytes         = 32 // RFC 7518 3.2: at least the hash size of HS256
	defaultJWKSMinInterval = 5 * time.Minute
	defaultJWKSMaxAge      = time.Hour
	defaultLeeway          = 30 * time.Second
)

// The algorithm families. A token is verified only with an algorithm of the
// family its key belongs to: HMAC for a secret, the asymmetric ones for
// public keys. That is what defeats algorithm confusion (an HS256 token
// "signed" with the RSA public key as HMAC secret) and alg "none", which is
// in no list.
var (
	hmacAlgs       = []jose.SignatureAlgorithm{jose.HS256, jose.HS384, jose.HS512}
	asymmetricAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
		jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}
)

// JWT authenticates `Authorization: Bearer <JWT>` access tokens: HS* with a
// shared secret, or RS*/PS*/ES*/EdDSA with keys from a JWKS URL or a static
// key file. The token must be signed, unexpired (exp is required), already
// valid (nbf), for this audience and, when set, from this issuer.
type JWT struct {
	// Secret is the HMAC secret (HS256/384/512); {env.X} is expanded.
	Secret string `json:"secret,omitempty"`
	// JWKSURL is the identity provider's key set.
	JWKSURL string `json:"jwks_url,omitempty"`
	// JWKSRefreshInterval is the least time between two fetches of the key
	// set (an unknown key id triggers one); default 5m.
	JWKSRefreshInterval caddy.Duration `json:"jwks_refresh_interval,omitempty"`
	// JWKSMaxAge is how long a fetched key set is used before it is fetched
	// again; default 1h.
	JWKSMaxAge caddy.Duration `json:"jwks_max_age,omitempty"`
	// KeyFile is a PEM public key or certificate, or a JWKS JSON document.
	KeyFile string `json:"key_file,omitempty"`
	// Algorithms narrows the accepted algorithms (default: all of the key's family).
	Algorithms []string `json:"algorithms,omitempty"`
	// Issuer must equal the iss claim, when set.
	Issuer string `json:"issuer,omitempty"`
	// Audience: the aud claim must contain one of these. Required, so that a
	// token the identity provider minted for another service is refused.
	Audience []string `json:"audience,omitempty"`
	// Leeway is the clock skew allowed on exp, nbf and iat; default 30s.
	Leeway *caddy.Duration `json:"leeway,omitempty"`
	// AuthorizationServers are published in the protected resource
	// metadata (RFC 9728) when this provider guards the endpoint; default
	// the issuer.
	AuthorizationServers []string `json:"authorization_servers,omitempty"`

	secret     []byte
	static     []jose.JSONWebKey
	jwks       *jwksCache
	algorithms []jose.SignatureAlgorithm
	leeway     time.Duration
	verified   *tokenCache
}

// CaddyModule returns the Caddy module information.
func (JWT) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.auth.jwt", New: func() caddy.Module { return new(JWT) }}
}

// Provision checks the key source and prepares the verifier.
func (j *JWT) Provision(caddy.Context) error {
	repl := caddy.NewReplacer()
	if err := j.checkRequired(); err != nil {
		return err
	}
	family := asymmetricAlgs
	switch {
	case j.Secret != "":
		j.secret = []byte(repl.ReplaceKnown(j.Secret, ""))
		if len(j.secret) < minSecretBytes {
			return fmt.Errorf("jwt: secret is empty or shorter than %d bytes (is its environment variable set?)", minSecretBytes)
		}
		family = hmacAlgs
	case j.JWKSURL != "":
		minInterval, maxAge := time.Duration(j.JWKSRefreshInterval), time.Duration(j.JWKSMaxAge)
		if minInterval <= 0 {
			minInterval = defaultJWKSMinInterval
		}
		if maxAge <= 0 {
			maxAge = defaultJWKSMaxAge
		}
		c, err := newJWKSCache(repl.ReplaceKnown(j.JWKSURL, ""), minInterval, maxAge)
		if err != nil {
			return err
		}
		j.jwks = c
	default:
		keys, err := readKeyFileJWT(repl.ReplaceKnown(j.KeyFile, ""))
		if err != nil {
			return err
		}
		j.static = keys
	}
	j.algorithms = family
	if len(j.Algorithms) > 0 {
		j.algorithms = nil
		for _, a := range j.Algorithms {
			alg := jose.SignatureAlgorithm(a)
			if !slices.Contains(family, alg) {
				return fmt.Errorf("jwt: algorithm %q does not fit the key source (want one of %v)", a, family)
			}
			j.algorithms = append(j.algorithms, alg)
		}
	}
	j.verified = newTokenCache()
	j.leeway = defaultLeeway
	if j.Leeway != nil {
		j.leeway = time.Duration(*j.Leeway)
	}
	if j.leeway < 0 || j.leeway > 5*time.Minute {
		return fmt.Errorf("jwt: leeway must be between 0 and 5m")
	}
	return nil
}

// readKeyFileJWT reads a PEM public key or certificate, or a JWKS document.
func readKeyFileJWT(path string) ([]jose.JSONWebKey, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("jwt: key_file: %v", err)
	}
	if trimmed := strings.TrimSpace(string(raw)); strings.HasPrefix(trimmed, "{") {
		keys, err := parseKeySet([]byte(trimmed))
		if err != nil {
			return nil, fmt.Errorf("jwt: key_file %s: %v", path, err)
		}
		return keys, nil
	}
	var keys []jose.JSONWebKey
	for rest := raw; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		var pub any
		switch block.Type {
		case "PUBLIC KEY":
			pub, err = x509.ParsePKIXPublicKey(block.Bytes)
		case "RSA PUBLIC KEY":
			pub, err = x509.ParsePKCS1PublicKey(block.Bytes)
		case "CERTIFICATE":
			var cert *x509.Certificate
			if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
				pub = cert.PublicKey
			}
		default:
			return nil, fmt.Errorf("jwt: key_file %s: PEM block %q is not a public key or certificate", path, block.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("jwt: key_file %s: %v", path, err)
		}
		switch pub.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		default:
			return nil, fmt.Errorf("jwt: key_file %s: unsupported key type %T", path, pub)
		}
		keys = append(keys, jose.JSONWebKey{Key: pub})
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("jwt: key_file %s: no PEM public key or JWKS found", path)
	}
	return keys, nil
}

// tokenClaims are the claims read besides the registered ones.
type tokenClaims map[string]any

// Authenticate verifies the bearer token. Each refusal names the failed
// check; none repeats the token.
func (j *JWT) Authenticate(ctx context.Context, req *pipeline.AuthRequest) (*pipeline.Identity, error) {
	raw, ok := bearerToken(req.Header)
	if !ok {
		return nil, pipeline.NoCredentials()
	}
	if len(raw) > maxTokenBytes {
		return nil, pipeline.InvalidCredentials("token too large")
	}
	cacheKey := sha256.Sum256([]byte(raw))
	if id, ok := j.verified.get(cacheKey, time.Now()); ok {
		return id, nil
	}
	tok, err := jwt.ParseSigned(raw, j.algorithms)
	if err != nil {
		var unexpected *jose.ErrUnexpectedSignatureAlgorithm
		if errors.As(err, &unexpected) {
			return nil, pipeline.InvalidCredentials("signature algorithm not accepted")
		}
		return nil, pipeline.InvalidCredentials("malformed token")
	}
	if len(tok.Headers) != 1 {
		return nil, pipeline.InvalidCredentials("malformed token")
	}
	hdr := tok.Headers[0]
	key, err := j.verificationKey(ctx, hdr)
	if err != nil {
		return nil, err
	}
	var std jwt.Claims
	extra := tokenClaims{}
	if err := tok.Claims(key, &std, &extra); err != nil {
		return nil, pipeline.InvalidCredentials("bad signature")
	}
	if err := j.validate(std); err != nil {
		return nil, err
	}
	// Registered claims the policy may test, in their JSON form.
	if std.Issuer != "" {
		extra["iss"] = std.Issuer
	}
	id := &pipeline.Identity{Subject: std.Subject, Claims: extra}
	// Cached until exp (without leeway: the cache never extends a token).
	j.verified.put(cacheKey, id, std.Expiry.Time())
	return id, nil
}

// verificationKey picks the key for the token's header: the secret, or the
// public key with the token's kid whose type fits the token's algorithm.
func (j *JWT) verificationKey(ctx context.Context, hdr jose.Header) (any, error) {
	alg := jose.SignatureAlgorithm(hdr.Algorithm)
	if j.secret != nil {
		return j.secret, nil
	}
	var key *jose.JSONWebKey
	if j.jwks != nil {
		k, err := j.jwks.key(ctx, hdr.KeyID)
		if errors.Is(err, errUnknownKey) {
			return nil, pipeline.InvalidCredentials("unknown signing key")
		}
		if err != nil {
			return nil, fmt.Errorf("jwt: key set unavailable: %w", err)
		}
		key = k
	} else if key = findKey(j.static, hdr.KeyID); key == nil && hdr.KeyID != "" {
		// A static key file usually has keys without ids.
		key = findKey(j.static, "")
	}
	if key == nil {
		return nil, pipeline.InvalidCredentials("unknown signing key")
	}
	if (key.Algorithm != "" && key.Algorithm != string(alg)) || !algFitsKey(alg, key.Key) {
		return nil, pipeline.InvalidCredentials("signature algorithm does not match the key")
	}
	return key.Key, nil
}

// algFitsKey: RS*/PS* need an RSA key, ES* an EC key of the matching
// curve, EdDSA an Ed25519 key.
func algFitsKey(alg jose.SignatureAlgorithm, key any) bool {
	switch k := key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(string(alg), "RS") || strings.HasPrefix(string(alg), "PS")
	case *ecdsa.PublicKey:
		want := map[jose.SignatureAlgorithm]int{jose.ES256: 256, jose.ES384: 384, jose.ES512: 521}[alg]
		return want != 0 && k.Curve.Params().BitSize == want
	case ed25519.PublicKey:
		return alg == jose.EdDSA
	}
	return false
}

func (j *JWT) validate(std jwt.Claims) error {
	if std.Expiry == nil {
		return pipeline.InvalidCredentials("token has no expiry")
	}
	if std.Subject == "" {
		return pipeline.InvalidCredentials("token has no subject")
	}
	err := std.ValidateWithLeeway(jwt.Expected{Issuer: j.Issuer, AnyAudience: j.Audience, Time: time.Now()}, j.leeway)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jwt.ErrExpired):
		return pipeline.InvalidCredentials("token expired")
	case errors.Is(err, jwt.ErrNotValidYet):
		return pipeline.InvalidCredentials("token not valid yet")
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return pipeline.InvalidCredentials("token issued in the future")
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return pipeline.InvalidCredentials("wrong issuer")
	case errors.Is(err, jwt.ErrInvalidAudience):
		return pipeline.InvalidCredentials("wrong audience")
	default:
		return pipeline.InvalidCredentials("invalid claims")
	}
}

// AuthorizationServerURLs are the authorization servers to publish in the
// protected resource metadata.
func (j *JWT) AuthorizationServerURLs() []string {
	if len(j.AuthorizationServers) > 0 {
		return j.AuthorizationServers
	}
	if j.Issuer != "" {
		return []string{j.Issuer}
	}
	return nil
}

// UnmarshalCaddyfile reads
//
//	jwt {
//		secret <secret>                  # HS256/384/512, or:
//		jwks_url <url>                   # RS/PS/ES/EdDSA, or:
//		key_file <path>                  # PEM public key / certificate / JWKS file
//		jwks_refresh_interval <duration> # default 5m
//		jwks_max_age <duration>          # default 1h
//		algorithms <alg...>
//		issuer <iss>
//		audience <aud...>
//		leeway <duration>                # default 30s
//		authorization_server <url...>    # RFC 9728 metadata; default the issuer
//	}
func (j *JWT) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the plugin name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		sub := d.Val()
		var one *string
		switch sub {
		case "secret":
			one = &j.Secret
		case "jwks_url":
			one = &j.JWKSURL
		case "key_file":
			one = &j.KeyFile
		case "issuer":
			one = &j.Issuer
		case "jwks_refresh_interval", "jwks_max_age", "leeway":
			var s string
			if !d.AllArgs(&s) {
				return d.Errf("jwt: %s needs one duration", sub)
			}
			dur, err := caddy.ParseDuration(s)
			if err != nil || dur < 0 {
				return d.Errf("jwt: %s: invalid duration %q", sub, s)
			}
			switch sub {
			case "jwks_refresh_interval":
				j.JWKSRefreshInterval = caddy.Duration(dur)
			case "jwks_max_age":
				j.JWKSMaxAge = caddy.Duration(dur)
			default:
				if dur > 5*time.Minute {
					return d.Errf("jwt: leeway must be at most 5m, got %s", s)
				}
				l := caddy.Duration(dur)
				j.Leeway = &l
			}
		case "algorithms", "audience", "authorization_server":
			vals := d.RemainingArgs()
			if len(vals) == 0 {
				return d.Errf("jwt: %s needs at least one value", sub)
			}
			switch sub {
			case "algorithms":
				for _, v := range vals {
					if !slices.Contains(hmacAlgs, jose.SignatureAlgorithm(v)) && !slices.Contains(asymmetricAlgs, jose.SignatureAlgorithm(v)) {
						return d.Errf("jwt: unknown algorithm %q (none is never accepted)", v)
					}
				}
				j.Algorithms = append(j.Algorithms, vals...)
			case "audience":
				j.Audience = append(j.Audience, vals...)
			default:
				j.AuthorizationServers = append(j.AuthorizationServers, vals...)
			}
		default:
			return d.Errf("jwt: unrecognized sub-directive %q", sub)
		}
		if one != nil {
			if !d.AllArgs(one) {
				return d.Errf("jwt: %s needs one value", sub)
			}
		}
	}
	if err := j.checkRequired(); err != nil {
		return d.Errf("%v", err)
	}
	return nil
}

// checkRequired: exactly one key source, and an audience.
func (j *JWT) checkRequired() error {
	n := 0
	for _, s := range []string{j.Secret, j.JWKSURL, j.KeyFile} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("jwt: set exactly one of secret, jwks_url, key_file")
	}
	if len(j.Audience) == 0 {
		return fmt.Errorf("jwt: audience is required (without it, tokens issued for other services would be accepted)")
	}
	return nil
}

// Interface guards.
var (
	_ caddy.Provisioner     = (*JWT)(nil)
	_ caddyfile.Unmarshaler = (*JWT)(nil)
	_ pipeline.AuthProvider = (*JWT)(nil)
)
