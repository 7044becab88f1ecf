package graphql

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/vektah/gqlparser/v2/ast"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

func init() {
	caddy.RegisterModule(Source{})
}

// Source is the guest module mcp.sources.graphql: `source <name> graphql
// <url> { ... }` (README, Sources: GraphQL; docs/graphql-source.md).
type Source struct {
	// Endpoint is the GraphQL endpoint's URL (http or https).
	Endpoint string `json:"endpoint"`
	// Schema is an SDL file to read the schema from; empty asks the
	// endpoint by introspection at provision.
	Schema string `json:"schema,omitempty"`
	// Mutations makes tools of the mutation fields and lets the raw query
	// tool send mutations; nil means on (`mutations off` sets false).
	Mutations *bool `json:"mutations,omitempty"`
	// Depth is how deep generated selection sets reach below the root
	// field (default 2).
	Depth int `json:"depth,omitempty"`
	// MaxDepth bounds the nesting of fields of every document sent, a
	// root field being depth 1 (default 10).
	MaxDepth int `json:"max_depth,omitempty"`
	// MaxFields bounds the number of fields of every document sent,
	// fragments counted where spread (default 200).
	MaxFields int `json:"max_fields,omitempty"`
	// Required fails the load when introspection fails. Otherwise the
	// source serves only its raw query tool, which answers once a
	// background introspection succeeds.
	Required bool `json:"required,omitempty"`
	// Set fixes field arguments by name: a literal, or {{ auth.subject }} /
	// {{ auth.claims.NAME }} of the verified caller. A fixed argument leaves
	// the tools' schemas, and every field that takes it, in every document
	// sent (the raw query tool's and a select's too), gets the value; a
	// document that gives it one is refused (Fixed).
	Set map[string]string `json:"set,omitempty"`

	upstream.Config

	endpoint string
	schema   *ast.Schema
	later    *pending // when the schema is still to come
	exec     *Executor
	release  func() // what the credentials hold
	log      *zap.Logger
	// retryFirst is the first wait of the background introspection.
	retryFirst time.Duration
}

var (
	_ caddy.Provisioner       = (*Source)(nil)
	_ caddyfile.Unmarshaler   = (*Source)(nil)
	_ pipeline.Source         = (*Source)(nil)
	_ pipeline.ChangeNotifier = (*Source)(nil)
)

// OnChange implements pipeline.ChangeNotifier: a schema that arrives by a
// background introspection brings the field tools without a reload.
func (s *Source) OnChange(changed func()) {
	if s.later != nil {
		s.later.changed.Store(&changed)
	}
}

// CaddyModule returns the Caddy module information.
func (Source) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.sources.graphql", New: func() caddy.Module { return new(Source) }}
}

// Provision checks the settings, makes the credentials and reads the
// schema: from the SDL file, or by introspection. An endpoint that cannot
// answer fails the load, naming it, when the source is required; else
// introspection goes on in the background until the config is unloaded.
// An answer that refuses introspection or holds a bad schema always fails
// the load: asking again would not change it.
func (s *Source) Provision(ctx caddy.Context) error {
	s.log = ctx.Logger()
	repl := caddy.NewReplacer()
	endpoint, err := checkEndpoint(repl.ReplaceKnown(s.Endpoint, ""))
	if err != nil {
		return fmt.Errorf("graphql: %v", err)
	}
	s.endpoint = endpoint
	if err := s.checkLimits(); err != nil {
		return fmt.Errorf("graphql %s: %v", endpoint, err)
	}
	built, err := s.Config.Build(ctx, repl)
	if err != nil {
		return fmt.Errorf("graphql %s: %v", endpoint, err)
	}
	s.release = built.Close
	client := upstream.NewClient(upstream.Transport)
	s.exec = &Executor{Endpoint: endpoint, Client: client, Credentials: built.Credentials, Retry: built.Retry,
		Breaker: built.Breaker, MaxResponseSize: built.MaxResponseSize, Timeout: built.Timeout}
	if path := repl.ReplaceKnown(s.Schema, ""); path != "" {
		var warnings []string
		s.schema, warnings, err = LoadSDL(path, 0)
		if len(warnings) > 0 {
			s.log.Warn("graphql schema file: definitions repeated alike are read once", zap.String("schema", path),
				zap.Int("repeats", len(warnings)), zap.Strings("first", warnings[:min(len(warnings), 5)]))
		}
		return err
	}
	// Introspection is the gateway's own request: a credential that
	// depends on the caller (passthrough, per_caller) has no caller to
	// take its secret from, and is left out.
	var creds []upstream.Credential
	for _, c := range built.Credentials {
		if _, ok := c.(upstream.CallerDependent); !ok {
			creds = append(creds, c)
		}
	}
	in := Introspector{Endpoint: endpoint, Client: client, Credentials: creds, Timeout: built.Timeout}
	loadCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.schema, err = in.Introspect(loadCtx)
	if err == nil {
		return nil
	}
	var down *unreachableError
	if s.Required || !errors.As(err, &down) {
		return fmt.Errorf("graphql %s: %v", endpoint, err)
	}
	s.log.Warn("graphql endpoint did not answer introspection: only the raw query tool is served, and answers once introspection succeeds in the background (set required to fail the load instead)",
		zap.String("endpoint", upstream.ShownURL(endpoint)), zap.Error(upstream.WithoutQuery(err)))
	s.later = newPending(err)
	// ctx ends when this config is unloaded, and the retries with it.
	go s.later.run(ctx, in, cmp.Or(s.retryFirst, retryFirst), s.log)
	return nil
}

// Cleanup releases what the credentials hold (a per_caller Redis client).
func (s *Source) Cleanup() error {
	if s.release != nil {
		s.release()
	}
	return nil
}

// checkEndpoint accepts an absolute http or https URL without user info.
func checkEndpoint(raw string) (string, error) {
	if raw == "" {
		return "", fmt.Errorf("no endpoint given")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("endpoint %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("endpoint %q: want an http or https URL", raw)
	}
	if u.User != nil {
		return "", fmt.Errorf("endpoint %s: put credentials in a credential, not in the URL", u.Redacted())
	}
	return u.String(), nil
}

func (s *Source) checkLimits() error {
	l := Limits{MaxDepth: s.MaxDepth, MaxFields: s.MaxFields}.withDefaults()
	if s.Depth < 0 || s.MaxDepth < 0 || s.MaxFields < 0 {
		return fmt.Errorf("depth, max_depth and max_fields must be positive")
	}
	if l.MaxFields < 2 {
		return fmt.Errorf("max_fields must be at least 2 (a root field and one field of its value)")
	}
	if depth := cmp.Or(s.Depth, DefaultDepth); depth >= l.MaxDepth {
		return fmt.Errorf("depth %d must be less than max_depth %d (the root field is one level)", depth, l.MaxDepth)
	}
	return nil
}

// Tools implements pipeline.Source.
func (s *Source) Tools(namespace string) ([]*pipeline.Tool, error) {
	fixed, err := NewFixed(s.Set)
	if err != nil {
		return nil, fmt.Errorf("graphql %s: %v", s.endpoint, err)
	}
	cfg := Config{
		Namespace: namespace,
		Mutations: s.Mutations == nil || *s.Mutations,
		Depth:     s.Depth,
		Limits:    Limits{MaxDepth: s.MaxDepth, MaxFields: s.MaxFields}.withDefaults(),
		Executor:  s.exec,
		Fixed:     fixed,
	}
	schema := s.schema
	if schema == nil && s.later != nil {
		if schema, err = s.later.get(); err != nil {
			return []*pipeline.Tool{newRawTool(cfg, cfg.Mutations, nil, s.later.get)}, nil
		}
	}
	tools, err := Tools(schema, cfg)
	if err != nil {
		return nil, fmt.Errorf("graphql %s: %v", s.endpoint, err)
	}
	if s.log != nil {
		s.log.Debug("graphql source loaded", zap.String("endpoint", upstream.ShownURL(s.endpoint)), zap.Int("tools", len(tools)))
	}
	return tools, nil
}

// UnmarshalCaddyfile reads `graphql <url> { ... }` (the source's name has
// been read by the mcp directive).
func (s *Source) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // "graphql"
	if !d.AllArgs(&s.Endpoint) {
		return d.Errf("usage: source <name> graphql <url> { ... }")
	}
	for d.NextBlock(0) {
		if ok, err := s.Config.UnmarshalSubdirective(d); ok {
			if err != nil {
				return err
			}
			continue
		}
		switch sub := d.Val(); sub {
		case "set":
			if err := upstream.UnmarshalSet(d, &s.Set); err != nil {
				return err
			}
		case "schema":
			if !d.AllArgs(&s.Schema) {
				return d.Errf("schema needs one SDL file")
			}
		case "required":
			if d.NextArg() {
				return d.ArgErr()
			}
			s.Required = true
		case "mutations":
			var v string
			if !d.AllArgs(&v) || (v != "on" && v != "off") {
				return d.Errf("mutations: want on or off")
			}
			on := v == "on"
			s.Mutations = &on
		case "depth", "max_depth", "max_fields":
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 10000 {
				return d.Errf("%s must be a whole number from 1 to 10000, got %q", sub, v)
			}
			switch sub {
			case "depth":
				s.Depth = n
			case "max_depth":
				s.MaxDepth = n
			default:
				s.MaxFields = n
			}
		default:
			return d.Errf("graphql source: unrecognized sub-directive %q (want schema, required, mutations, depth, max_depth, max_fields, set, credential, header, retries, circuit_breaker, timeout, max_response_size)", sub)
		}
	}
	if err := s.checkLimits(); err != nil {
		return d.Errf("graphql source: %v", err)
	}
	return nil
}
