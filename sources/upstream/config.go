package upstream

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Config is what every HTTP source accepts besides its own settings
// (README, Sources): credentials, static headers, retries, a circuit
// breaker, timeouts and a response bound. Source modules embed it and
// hand their Caddyfile sub-directives to UnmarshalSubdirective.
type Config struct {
	Credentials     []CredentialConfig `json:"credentials,omitempty"`
	Headers         map[string]string  `json:"headers,omitempty"`
	Retries         *int               `json:"retries,omitempty"`
	CircuitBreaker  *BreakerConfig     `json:"circuit_breaker,omitempty"`
	Timeout         caddy.Duration     `json:"timeout,omitempty"`
	MaxResponseSize int64              `json:"max_response_size,omitempty"`
}

// CredentialConfig is one `credential <kind> ...`.
type CredentialConfig struct {
	Kind string `json:"kind"` // bearer, api_key, basic, oauth2, passthrough, per_caller, token_exchange

	Token        string   `json:"token,omitempty"`         // bearer
	In           string   `json:"in,omitempty"`            // api_key: header, query or cookie
	Name         string   `json:"name,omitempty"`          // api_key
	Value        string   `json:"value,omitempty"`         // api_key
	User         string   `json:"user,omitempty"`          // basic
	Password     string   `json:"password,omitempty"`      // basic
	TokenURL     string   `json:"token_url,omitempty"`     // oauth2, token_exchange
	ClientID     string   `json:"client_id,omitempty"`     // oauth2, token_exchange
	ClientSecret string   `json:"client_secret,omitempty"` // oauth2, token_exchange
	Scopes       []string `json:"scopes,omitempty"`        // oauth2, token_exchange

	// token_exchange (RFC 8693): the upstream the exchanged token is for
	// (Audience, Resource), how the client authenticates (ClientAuth:
	// basic or post) and what the caller's token is (SubjectTokenType:
	// access_token or jwt).
	Audience         []string `json:"audience,omitempty"`
	Resource         []string `json:"resource,omitempty"`
	ClientAuth       string   `json:"client_auth,omitempty"`
	SubjectTokenType string   `json:"subject_token_type,omitempty"`

	// per_caller: the secret is looked up by the caller's subject (or
	// Claim) in File or Redis, and sent As a bearer token or an api_key
	// (In, Name).
	As          string `json:"as,omitempty"`
	File        string `json:"file,omitempty"`
	Redis       string `json:"redis,omitempty"`
	RedisPrefix string `json:"redis_prefix,omitempty"`
	Claim       string `json:"claim,omitempty"`
}

// FromCaller reports whether the credential sends what the caller brings
// (passthrough, per_caller, token_exchange): a source that keeps state
// upstream must then keep it per caller.
func (cc CredentialConfig) FromCaller() bool {
	switch cc.Kind {
	case "passthrough", "per_caller", "token_exchange":
		return true
	}
	return false
}

// BreakerConfig is `circuit_breaker { failures N window D cooldown D }`.
type BreakerConfig struct {
	Failures int            `json:"failures,omitempty"`
	Window   caddy.Duration `json:"window,omitempty"`
	Cooldown caddy.Duration `json:"cooldown,omitempty"`
}

// Built is a Config ready to use: placeholders expanded, credentials made.
type Built struct {
	Credentials     []Credential
	Retry           Retry
	Breaker         *Breaker
	Timeout         time.Duration
	MaxResponseSize int64
}

// Close releases what the credentials hold. None holds anything now (a
// per_caller credential's Redis is a store module Caddy cleans up); the
// sources call it where a credential would need it.
func (b Built) Close() {
	for _, c := range b.Credentials {
		if p, ok := c.(*PerCaller); ok {
			p.Close()
		}
	}
}

// Build expands {env.X} placeholders in secrets and makes the credentials
// (static headers last, as credentials too: no caller may set them).
// Errors name the credential, never its secret.
func (c Config) Build(ctx caddy.Context, repl *caddy.Replacer) (Built, error) {
	b := Built{Retry: DefaultRetry, Timeout: time.Duration(c.Timeout), MaxResponseSize: c.MaxResponseSize}
	if c.Retries != nil {
		b.Retry.Attempts = *c.Retries
	}
	x := func(s string) string { return repl.ReplaceKnown(s, "") }
	for i, cc := range c.Credentials {
		var cred Credential
		switch cc.Kind {
		case "bearer":
			cred = Bearer{Token: x(cc.Token)}
			if x(cc.Token) == "" {
				return b, fmt.Errorf("credential bearer: the token is empty (is its environment variable set?)")
			}
		case "api_key":
			if cc.In != "header" && cc.In != "query" && cc.In != "cookie" {
				return b, fmt.Errorf("credential api_key: location %q: want header, query or cookie", cc.In)
			}
			if x(cc.Value) == "" {
				return b, fmt.Errorf("credential api_key %s: the key is empty (is its environment variable set?)", cc.Name)
			}
			cred = APIKey{In: cc.In, Name: cc.Name, Value: x(cc.Value)}
		case "basic":
			cred = Basic{User: x(cc.User), Password: x(cc.Password)}
		case "oauth2":
			if cc.TokenURL == "" || x(cc.ClientID) == "" {
				return b, fmt.Errorf("credential oauth2: token_url and client_id are required")
			}
			timeout := b.Timeout
			if timeout <= 0 {
				timeout = 30 * time.Second
			}
			cred = NewOAuth2(x(cc.TokenURL), x(cc.ClientID), x(cc.ClientSecret), cc.Scopes, timeout)
		case "passthrough":
			cred = Passthrough{}
		case "token_exchange":
			te, err := NewTokenExchange(TokenExchangeConfig{TokenURL: x(cc.TokenURL), ClientID: x(cc.ClientID), ClientSecret: x(cc.ClientSecret),
				ClientAuth: cc.ClientAuth, SubjectTokenType: cc.SubjectTokenType, Audience: cc.Audience, Resource: cc.Resource, Scopes: cc.Scopes,
				Timeout: b.Timeout})
			if err != nil {
				b.Close()
				return b, err
			}
			cred = te
		case "per_caller":
			p, err := buildPerCaller(ctx, cc, x, b.Timeout)
			if err != nil {
				b.Close()
				return b, err
			}
			cred = p
		default:
			return b, fmt.Errorf("credential #%d: unknown kind %q (want %s)", i+1, cc.Kind, credentialKinds)
		}
		b.Credentials = append(b.Credentials, cred)
	}
	for name, v := range c.Headers {
		b.Credentials = append(b.Credentials, Header{Name: http.CanonicalHeaderKey(name), Value: x(v)})
	}
	if bc := c.CircuitBreaker; bc != nil {
		failures, window, cooldown := bc.Failures, time.Duration(bc.Window), time.Duration(bc.Cooldown)
		if failures <= 0 {
			failures = 5
		}
		if window <= 0 {
			window = 30 * time.Second
		}
		if cooldown <= 0 {
			cooldown = 30 * time.Second
		}
		b.Breaker = NewBreaker(failures, window, cooldown)
	}
	return b, nil
}

// buildPerCaller makes a per_caller credential; x expands placeholders.
func buildPerCaller(ctx caddy.Context, cc CredentialConfig, x func(string) string, timeout time.Duration) (*PerCaller, error) {
	p := &PerCaller{Claim: cc.Claim}
	switch cc.As {
	case "bearer":
		p.As = Bearer{}
	case "api_key":
		if cc.In != "header" && cc.In != "query" && cc.In != "cookie" || cc.Name == "" {
			return nil, fmt.Errorf("credential per_caller api_key: want header|query|cookie and a name")
		}
		p.As = APIKey{In: cc.In, Name: cc.Name}
	default:
		return nil, fmt.Errorf("credential per_caller: send the secret as bearer or api_key, not %q", cc.As)
	}
	var err error
	switch {
	case cc.File != "" && cc.Redis == "":
		p.lookup, err = perCallerFromFile(x(cc.File))
	case cc.Redis != "" && cc.File == "":
		if timeout <= 0 || timeout > time.Second {
			timeout = 500 * time.Millisecond
		}
		p.lookup, err = perCallerFromRedis(ctx, x(cc.Redis), x(cc.RedisPrefix), timeout)
	default:
		return nil, fmt.Errorf("credential per_caller: give one of file or redis")
	}
	if err != nil {
		return nil, fmt.Errorf("credential per_caller: %v", err)
	}
	return p, nil
}

// UnmarshalSubdirective reads one of the shared sub-directives at d (on
// its name) into c, and reports whether it was one.
func (c *Config) UnmarshalSubdirective(d *caddyfile.Dispenser) (bool, error) {
	switch d.Val() {
	case "credential":
		cc, err := unmarshalCredential(d)
		if err != nil {
			return true, err
		}
		c.Credentials = append(c.Credentials, cc)
	case "header":
		args := d.RemainingArgs()
		if len(args) != 2 {
			return true, d.Errf("header needs a name and a value")
		}
		if c.Headers == nil {
			c.Headers = map[string]string{}
		}
		c.Headers[args[0]] = args[1]
	case "retries":
		var s string
		if !d.AllArgs(&s) {
			return true, d.ArgErr()
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 10 {
			return true, d.Errf("retries must be a whole number from 0 to 10, got %q", s)
		}
		c.Retries = &n
	case "timeout":
		dur, err := durationArg(d)
		if err != nil {
			return true, err
		}
		c.Timeout = caddy.Duration(dur)
	case "max_response_size":
		var s string
		if !d.AllArgs(&s) {
			return true, d.ArgErr()
		}
		n, err := pipeline.ParseSize(s)
		if err != nil {
			return true, d.Errf("max_response_size: %v", err)
		}
		c.MaxResponseSize = n
	case "circuit_breaker":
		bc := &BreakerConfig{}
		if d.NextArg() {
			return true, d.ArgErr()
		}
		for nesting := d.Nesting(); d.NextBlock(nesting); {
			switch sub := d.Val(); sub {
			case "failures":
				var s string
				if !d.AllArgs(&s) {
					return true, d.ArgErr()
				}
				n, err := strconv.Atoi(s)
				if err != nil || n < 1 {
					return true, d.Errf("circuit_breaker: failures must be a positive whole number, got %q", s)
				}
				bc.Failures = n
			case "window", "cooldown":
				dur, err := durationArg(d)
				if err != nil {
					return true, err
				}
				if sub == "window" {
					bc.Window = caddy.Duration(dur)
				} else {
					bc.Cooldown = caddy.Duration(dur)
				}
			default:
				return true, d.Errf("circuit_breaker: unrecognized sub-directive %q (want failures, window, cooldown)", sub)
			}
		}
		c.CircuitBreaker = bc
	default:
		return false, nil
	}
	return true, nil
}

// UnmarshalSet reads `set <name> <value | {{ auth.subject }} |
// {{ auth.claims.NAME }}>` (d on "set") into m.
func UnmarshalSet(d *caddyfile.Dispenser, m *map[string]string) error {
	args := d.RemainingArgs()
	if len(args) < 2 {
		return d.Errf("usage: set <name> <value | {{ auth.subject }} | {{ auth.claims.NAME }}>")
	}
	// The Caddyfile splits "{{ auth.claims.x }}" into three tokens.
	value := strings.Join(args[1:], " ")
	if _, err := ParseFixed(value); err != nil {
		return d.Errf("set %s: %v", args[0], err)
	}
	if *m == nil {
		*m = map[string]string{}
	}
	if _, dup := (*m)[args[0]]; dup {
		return d.Errf("set %s: declared twice", args[0])
	}
	(*m)[args[0]] = value
	return nil
}

// credentialKinds are the kinds a credential line may name.
const credentialKinds = "bearer, api_key, basic, oauth2, passthrough, per_caller or token_exchange"

func unmarshalCredential(d *caddyfile.Dispenser) (CredentialConfig, error) {
	var cc CredentialConfig
	if !d.NextArg() {
		return cc, d.Errf("credential needs a kind: %s", credentialKinds)
	}
	cc.Kind = d.Val()
	args := d.RemainingArgs()
	want := func(n int, usage string) error {
		if len(args) != n {
			return d.Errf("usage: credential %s", usage)
		}
		return nil
	}
	switch cc.Kind {
	case "bearer":
		if err := want(1, "bearer <token>"); err != nil {
			return cc, err
		}
		cc.Token = args[0]
	case "api_key":
		if err := want(3, "api_key header|query|cookie <name> <value>"); err != nil {
			return cc, err
		}
		cc.In, cc.Name, cc.Value = args[0], args[1], args[2]
		if cc.In != "header" && cc.In != "query" && cc.In != "cookie" {
			return cc, d.Errf("credential api_key: location %q: want header, query or cookie", cc.In)
		}
	case "basic":
		if err := want(2, "basic <user> <password>"); err != nil {
			return cc, err
		}
		cc.User, cc.Password = args[0], args[1]
	case "passthrough":
		if err := want(0, "passthrough"); err != nil {
			return cc, err
		}
	case "per_caller":
		usage := "per_caller bearer | per_caller api_key header|query|cookie <name> { file <path> | redis <url> [<prefix>]; claim <name> }"
		switch {
		case len(args) == 1 && args[0] == "bearer":
			cc.As = "bearer"
		case len(args) == 3 && args[0] == "api_key":
			cc.As, cc.In, cc.Name = "api_key", args[1], args[2]
			if cc.In != "header" && cc.In != "query" && cc.In != "cookie" {
				return cc, d.Errf("credential per_caller api_key: location %q: want header, query or cookie", cc.In)
			}
		default:
			return cc, d.Errf("usage: credential %s", usage)
		}
		for nesting := d.Nesting(); d.NextBlock(nesting); {
			switch sub := d.Val(); sub {
			case "file", "claim":
				var v string
				if !d.AllArgs(&v) {
					return cc, d.Errf("credential per_caller: %s needs one value", sub)
				}
				if sub == "file" {
					cc.File = v
				} else {
					cc.Claim = v
				}
			case "redis":
				args := d.RemainingArgs()
				if len(args) < 1 || len(args) > 2 {
					return cc, d.Errf("credential per_caller: usage: redis <url> [<key prefix>]")
				}
				cc.Redis = args[0]
				if len(args) == 2 {
					cc.RedisPrefix = args[1]
				}
			default:
				return cc, d.Errf("credential per_caller: unrecognized sub-directive %q (want file, redis, claim)", sub)
			}
		}
		if (cc.File == "") == (cc.Redis == "") {
			return cc, d.Errf("credential per_caller: give one of file or redis")
		}
	case "oauth2":
		if err := want(0, "oauth2 { token_url <url>; client_id <id>; client_secret <secret>; scopes <scope...> }"); err != nil {
			return cc, err
		}
		for nesting := d.Nesting(); d.NextBlock(nesting); {
			switch sub := d.Val(); sub {
			case "token_url", "client_id", "client_secret":
				var v string
				if !d.AllArgs(&v) {
					return cc, d.Errf("credential oauth2: %s needs one value", sub)
				}
				switch sub {
				case "token_url":
					cc.TokenURL = v
				case "client_id":
					cc.ClientID = v
				default:
					cc.ClientSecret = v
				}
			case "scopes":
				cc.Scopes = append(cc.Scopes, d.RemainingArgs()...)
			default:
				return cc, d.Errf("credential oauth2: unrecognized sub-directive %q (want token_url, client_id, client_secret, scopes)", sub)
			}
		}
		if cc.TokenURL == "" || cc.ClientID == "" {
			return cc, d.Errf("credential oauth2: token_url and client_id are required")
		}
	case "token_exchange":
		if err := unmarshalTokenExchange(d, &cc, args); err != nil {
			return cc, err
		}
	default:
		return cc, d.Errf("credential: unknown kind %q (want %s)", cc.Kind, credentialKinds)
	}
	return cc, nil
}

func durationArg(d *caddyfile.Dispenser) (time.Duration, error) {
	var s string
	if !d.AllArgs(&s) {
		return 0, d.ArgErr()
	}
	dur, err := caddy.ParseDuration(s)
	if err != nil || dur <= 0 {
		return 0, d.Errf("%s: %q is not a positive duration", d.Val(), s)
	}
	return dur, nil
}

// unmarshalTokenExchange reads the block of `credential token_exchange`:
//
//	credential token_exchange {
//		token_url <url>
//		client_id <id>
//		client_secret <secret>
//		client_auth basic|post
//		audience <uri...>
//		resource <uri...>
//		scopes <scope...>
//		subject_token_type access_token|jwt
//	}
func unmarshalTokenExchange(d *caddyfile.Dispenser, cc *CredentialConfig, args []string) error {
	if len(args) != 0 {
		return d.Errf("usage: credential token_exchange { token_url <url>; client_id <id>; client_secret <secret>; audience <uri...>; resource <uri...>; scopes <scope...>; client_auth basic|post; subject_token_type access_token|jwt }")
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch sub := d.Val(); sub {
		case "token_url", "client_id", "client_secret", "client_auth", "subject_token_type":
			var v string
			if !d.AllArgs(&v) {
				return d.Errf("credential token_exchange: %s needs one value", sub)
			}
			switch sub {
			case "token_url":
				cc.TokenURL = v
			case "client_id":
				cc.ClientID = v
			case "client_secret":
				cc.ClientSecret = v
			case "client_auth":
				if v != "basic" && v != "post" {
					return d.Errf("credential token_exchange: client_auth %q: want basic or post", v)
				}
				cc.ClientAuth = v
			default:
				if v != "access_token" && v != "jwt" {
					return d.Errf("credential token_exchange: subject_token_type %q: want access_token or jwt", v)
				}
				cc.SubjectTokenType = v
			}
		case "audience", "resource", "scopes":
			vals := d.RemainingArgs()
			if len(vals) == 0 {
				return d.Errf("credential token_exchange: %s needs at least one value", sub)
			}
			switch sub {
			case "audience":
				cc.Audience = append(cc.Audience, vals...)
			case "resource":
				cc.Resource = append(cc.Resource, vals...)
			default:
				cc.Scopes = append(cc.Scopes, vals...)
			}
		default:
			return d.Errf("credential token_exchange: unrecognized sub-directive %q (want token_url, client_id, client_secret, client_auth, audience, resource, scopes, subject_token_type)", sub)
		}
	}
	if cc.TokenURL == "" || cc.ClientID == "" {
		return d.Errf("credential token_exchange: token_url and client_id are required")
	}
	if len(cc.Audience) == 0 && len(cc.Resource) == 0 {
		return d.Errf("credential token_exchange: name the upstream the token is for with audience or resource")
	}
	return nil
}
