package openapi

import (
	"context"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

func init() {
	caddy.RegisterModule(Source{})
}

// Source is the guest module mcp.sources.openapi: `source <name> openapi
// <file-or-url> { ... }` (README, Sources: OpenAPI).
type Source struct {
	// Spec is the document's path or URL.
	Spec string `json:"spec"`
	// BaseURL overrides the document's servers[0].
	BaseURL string `json:"base_url,omitempty"`
	// Include and Exclude are globs over operationId, tag, method and path.
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
	// Deprecated includes deprecated operations.
	Deprecated bool `json:"deprecated,omitempty"`
	// AllowExternalRefs lets the document's $refs read other files or URLs.
	AllowExternalRefs bool `json:"allow_external_refs,omitempty"`
	// MaxSpecSize bounds the document (default 32 MiB).
	MaxSpecSize int64 `json:"max_spec_size,omitempty"`
	// LoadTimeout bounds fetching the document (default 30s).
	LoadTimeout caddy.Duration `json:"load_timeout,omitempty"`

	upstream.Config

	doc   *Document
	built upstream.Built
	log   *zap.Logger
}

var (
	_ caddy.Provisioner     = (*Source)(nil)
	_ caddyfile.Unmarshaler = (*Source)(nil)
	_ pipeline.Source       = (*Source)(nil)
)

// CaddyModule returns the Caddy module information.
func (Source) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.sources.openapi", New: func() caddy.Module { return new(Source) }}
}

// Provision reads and checks the document and makes the credentials; a
// document that cannot be read fails the load, naming it.
func (s *Source) Provision(ctx caddy.Context) error {
	s.log = ctx.Logger()
	repl := caddy.NewReplacer()
	spec := repl.ReplaceKnown(s.Spec, "")
	if spec == "" {
		return fmt.Errorf("openapi: no document given")
	}
	built, err := s.Config.Build(repl)
	if err != nil {
		return fmt.Errorf("openapi %s: %v", spec, err)
	}
	s.built = built
	loadCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	doc, err := Load(loadCtx, spec, LoadOptions{MaxSize: s.MaxSpecSize, Timeout: time.Duration(s.LoadTimeout), AllowExternalRefs: s.AllowExternalRefs})
	if err != nil {
		return err
	}
	s.doc = doc
	if err := (Options{Include: s.Include, Exclude: s.Exclude}).Check(); err != nil {
		return fmt.Errorf("openapi %s: %v", spec, err)
	}
	return nil
}

// Tools implements pipeline.Source.
func (s *Source) Tools(namespace string) ([]*pipeline.Tool, error) {
	tools, err := Tools(s.doc, Config{
		Options:         Options{Prefix: namespace, Include: s.Include, Exclude: s.Exclude, Deprecated: s.Deprecated},
		BaseURL:         caddy.NewReplacer().ReplaceKnown(s.BaseURL, ""),
		Credentials:     s.built.Credentials,
		Retry:           s.built.Retry,
		Breaker:         s.built.Breaker,
		MaxResponseSize: s.built.MaxResponseSize,
		Timeout:         s.built.Timeout,
	})
	if err != nil {
		return nil, fmt.Errorf("openapi %s: %v", s.doc.Location, err)
	}
	if s.log != nil {
		s.log.Debug("openapi source loaded", zap.String("spec", s.doc.Location), zap.Int("tools", len(tools)), zap.Bool("converted_from_swagger2", s.doc.Converted))
	}
	return tools, nil
}

// UnmarshalCaddyfile reads `openapi <file-or-url> { ... }` (the source's
// name has been read by the mcp directive).
func (s *Source) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // "openapi"
	if !d.AllArgs(&s.Spec) {
		return d.Errf("usage: source <name> openapi <file-or-url> { ... }")
	}
	for d.NextBlock(0) {
		if ok, err := s.Config.UnmarshalSubdirective(d); ok {
			if err != nil {
				return err
			}
			continue
		}
		switch sub := d.Val(); sub {
		case "base_url":
			if !d.AllArgs(&s.BaseURL) {
				return d.Errf("base_url needs one URL")
			}
		case "include", "exclude":
			globs := d.RemainingArgs()
			if len(globs) == 0 {
				return d.Errf("%s needs at least one pattern (operationId, tag, method or path, with * and ?)", sub)
			}
			if err := (Options{Include: globs}).Check(); err != nil {
				return d.Errf("%s: %v", sub, err)
			}
			if sub == "include" {
				s.Include = append(s.Include, globs...)
			} else {
				s.Exclude = append(s.Exclude, globs...)
			}
		case "deprecated", "allow_external_refs":
			if d.NextArg() {
				return d.ArgErr()
			}
			if sub == "deprecated" {
				s.Deprecated = true
			} else {
				s.AllowExternalRefs = true
			}
		case "max_spec_size":
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			n, err := upstream.ParseSize(v)
			if err != nil {
				return d.Errf("max_spec_size: %v", err)
			}
			s.MaxSpecSize = n
		case "load_timeout":
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("load_timeout: %q is not a positive duration", v)
			}
			s.LoadTimeout = caddy.Duration(dur)
		default:
			return d.Errf("openapi source: unrecognized sub-directive %q (want base_url, include, exclude, deprecated, allow_external_refs, max_spec_size, load_timeout, credential, header, retries, circuit_breaker, timeout, max_response_size)", sub)
		}
	}
	return nil
}
