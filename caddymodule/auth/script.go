package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/script"
)

func init() {
	caddy.RegisterModule(Script{})
}

// maxSubjectLength bounds the subject a script may return: it is logged
// and may be a cache key part, so it must stay small.
const maxSubjectLength = 512

// maxScriptInput bounds the JSON of {headers, tool, remote_addr}.
const maxScriptInput = 4 << 20

// Script authenticates with the operator's own JavaScript or TypeScript
// function (the scripts runtime, pipeline/script). The function gets
//
//	{headers: {<lower-case name>: "<value>", ...}, tool: "<name>" | "", remote_addr: "<ip:port>"}
//
// and returns {subject, claims} (or a promise of it) to admit the caller,
// or throws to refuse it. tool is "" at the endpoint layer (default_auth).
type Script struct {
	// File is path/to/file.js[#export] (default export: "default").
	File string `json:"file"`
	// Timeout bounds one call (default 1s, as for every script).
	Timeout caddy.Duration `json:"timeout,omitempty"`
	// FetchAllow lists the hosts the script may fetch() from (a token
	// introspection endpoint, say); empty: the script has no fetch.
	FetchAllow []string `json:"fetch_allow,omitempty"`
	// AuthorizationServers are published in the protected resource
	// metadata (RFC 9728) when this provider is the default_auth, for a
	// script that checks tokens an OAuth authorization server issued (by
	// introspection through fetch, say).
	AuthorizationServers []string `json:"authorization_servers,omitempty"`

	script *script.Script
	logger *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (Script) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.auth.script", New: func() caddy.Module { return new(Script) }}
}

// Provision bundles, compiles and checks the script: a missing file, a
// syntax error or a missing export fails the config load, not a request.
func (s *Script) Provision(ctx caddy.Context) error {
	s.logger = ctx.Logger()
	file := caddy.NewReplacer().ReplaceKnown(s.File, "")
	if strings.TrimSpace(file) == "" {
		return errors.New("script: missing file (path/to/file.js[#export])")
	}
	for _, a := range s.FetchAllow {
		if err := script.ParseFetchAllow(a); err != nil {
			return fmt.Errorf("script: %v", err)
		}
	}
	loaded, err := script.Load(file, script.Options{
		Name:           "auth script " + file,
		Timeout:        time.Duration(s.Timeout),
		TimeoutSetting: "timeout",
		// The argument is the request's headers, which the HTTP server
		// already bounds (1 MiB by default); above the runtime's default
		// 1 MiB, so that a request at that bound is still answered as a
		// refusal, not as a failure of the script.
		MaxInput:   maxScriptInput,
		FetchAllow: s.FetchAllow,
		Logger:     ctx.Slogger(),
	})
	if err != nil {
		return fmt.Errorf("script: %v", err)
	}
	s.script = loaded
	return nil
}

// AuthorizationServerURLs are the authorization servers to publish.
func (s *Script) AuthorizationServerURLs() []string { return s.AuthorizationServers }

// PerTool: the function sees the tool's name, so its answer is remembered
// per tool, never reused for another tool of the same request.
func (s *Script) PerTool() bool { return true }

// PoolStats reports the script's runtime pool; the endpoint exposes it as
// edgemcp_script_pool_*{pool="auth <name>"}.
func (s *Script) PoolStats() pipeline.PoolStats { return s.script.PoolStats() }

// Authenticate calls the function. A throw (or a rejected promise) is the
// caller's refusal, its message shown as the reason once every header
// value is blotted out of it; a failure of the script itself (timeout, a
// return that is not an identity) is "authentication unavailable", logged
// for the operator without header values.
func (s *Script) Authenticate(ctx context.Context, req *pipeline.AuthRequest) (*pipeline.Identity, error) {
	headers := make(map[string]any, len(req.Header))
	for name, values := range req.Header {
		headers[strings.ToLower(name)] = strings.Join(values, ", ")
	}
	v, err := s.script.CallValue(ctx, map[string]any{
		"headers":     headers,
		"tool":        req.Tool,
		"remote_addr": req.RemoteAddr,
	})
	if err != nil {
		var se *script.Error
		if !errors.As(err, &se) {
			se = &script.Error{Kind: script.KindInternal, Message: "script runtime error"}
		}
		msg := redact(se.Message, req)
		if se.Kind == script.KindThrown {
			return nil, pipeline.InvalidCredentials("%s", msg)
		}
		// Only the redacted message travels on: Error() would add the
		// stack, and an internal error's stack is free text.
		err = fmt.Errorf("auth script %s: %s", s.script.File(), msg)
		s.logger.Warn("auth script failed", zap.String("kind", string(se.Kind)), zap.String("tool", req.Tool), zap.Error(err))
		return nil, err
	}
	id, err := identityOf(v)
	if err != nil {
		err = fmt.Errorf("auth script %s#%s: %v", s.script.File(), s.script.Export(), err)
		s.logger.Warn("auth script returned no identity", zap.String("tool", req.Tool), zap.Error(err))
		return nil, err
	}
	return id, nil
}

// identityOf reads {subject, claims} from what the function returned.
// Errors name types, never values: the value may hold what the script
// read from the headers.
func identityOf(v any) (*pipeline.Identity, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("returned %s, want {subject, claims} (throw to refuse the caller)", jsonType(v))
	}
	subject, ok := obj["subject"].(string)
	switch {
	case !ok:
		return nil, fmt.Errorf("the returned subject is %s, want a non-empty string", jsonType(obj["subject"]))
	case strings.TrimSpace(subject) == "":
		return nil, errors.New("the returned subject is empty")
	case len(subject) > maxSubjectLength:
		return nil, fmt.Errorf("the returned subject is longer than %d bytes", maxSubjectLength)
	}
	claims := map[string]any{}
	switch c := obj["claims"].(type) {
	case nil:
	case map[string]any:
		claims = c
	default:
		return nil, fmt.Errorf("the returned claims are %s, want an object", jsonType(c))
	}
	return &pipeline.Identity{Subject: subject, Claims: claims}, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null or undefined"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	default:
		return "a number"
	}
}

// UnmarshalCaddyfile reads
//
//	script {
//		file <path>[#export]
//		timeout <duration>
//		fetch_allow <host...>
//		authorization_server <url...>
//	}
func (s *Script) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next()                         // the plugin name
	file, line := d.File(), d.Line() // where a missing file is reported
	if d.NextArg() {
		return d.Errf("script: settings go in a block: script { file <path>[#export] }")
	}
	for d.NextBlock(0) {
		switch sub := d.Val(); sub {
		case "file":
			if s.File != "" {
				return d.Errf("script: file declared twice")
			}
			if !d.AllArgs(&s.File) {
				return d.Errf("script: file needs one path/to/file.js[#export]")
			}
		case "timeout":
			var v string
			if !d.AllArgs(&v) {
				return d.Errf("script: timeout needs one duration")
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("script: timeout: invalid duration %q", v)
			}
			s.Timeout = caddy.Duration(dur)
		case "fetch_allow":
			hosts := d.RemainingArgs()
			if len(hosts) == 0 {
				return d.Errf("script: fetch_allow needs at least one host (api.example.com, *.example.com or host:port)")
			}
			for _, h := range hosts {
				if err := script.ParseFetchAllow(h); err != nil {
					return d.Errf("script: %v", err)
				}
			}
			s.FetchAllow = append(s.FetchAllow, hosts...)
		case "authorization_server":
			urls := d.RemainingArgs()
			if len(urls) == 0 {
				return d.Errf("script: authorization_server needs at least one URL")
			}
			for _, u := range urls {
				if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
					return d.Errf("script: authorization_server must be an absolute http(s) URL, got %q", u)
				}
			}
			s.AuthorizationServers = append(s.AuthorizationServers, urls...)
		default:
			return d.Errf("script: unrecognized setting %q (want file, timeout, fetch_allow, authorization_server)", sub)
		}
	}
	if s.File == "" {
		return fmt.Errorf("script: missing `file <path>[#export]`, at %s:%d", file, line)
	}
	return nil
}

// Interface guards.
var (
	_ caddy.Provisioner        = (*Script)(nil)
	_ caddyfile.Unmarshaler    = (*Script)(nil)
	_ pipeline.AuthProvider    = (*Script)(nil)
	_ pipeline.PerToolProvider = (*Script)(nil)
	_ pipeline.PoolStatser     = (*Script)(nil)
)
