package openapi

import (
	"context"
	"fmt"
	"sync/atomic"
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
	// BaseURL overrides the document's servers[0]. Required when the
	// source sends credentials or static headers (sendsSecrets).
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
	// Refresh re-reads the document this often; a changed document
	// changes the tools without a reload (default: never).
	Refresh caddy.Duration `json:"refresh,omitempty"`
	// Cache caches the results of GET and HEAD operations this long in the
	// endpoint's result cache; CacheRespect lets the upstream's
	// Cache-Control (no-store, private, max-age) shorten or prevent it.
	Cache        caddy.Duration `json:"cache,omitempty"`
	CacheRespect bool           `json:"cache_respect,omitempty"`
	// CacheOperations are globs (as include's) over operations besides GET
	// and HEAD whose results are cached too: a POST that only reads (a
	// search) can opt in; nothing else is cached.
	CacheOperations []string `json:"cache_operations,omitempty"`
	// Set fixes parameters by name: a literal, or {{ auth.subject }} /
	// {{ auth.claims.NAME }} of the verified caller. A fixed parameter is
	// not an input: no caller can set or change it.
	Set map[string]string `json:"set,omitempty"`
	// Strict fails the load on an operation the gateway cannot serve or
	// any validation finding in the document; without it such an
	// operation is left out (one warning line each) and the rest served.
	Strict bool `json:"strict,omitempty"`
	// OutputSchema is "strict" to publish each operation's response schema
	// as its tool's outputSchema and turn an answer outside it into an
	// isError result; "off" (the default) publishes none.
	OutputSchema string `json:"output_schema,omitempty"`

	upstream.Config

	live  *liveDoc
	built upstream.Built
	log   *zap.Logger
}

// liveDoc is the document now, and whom to tell when it changes.
type liveDoc struct {
	doc     atomic.Pointer[Document]
	changed atomic.Pointer[func()]
	// reported is the document whose findings and left-out operations
	// have been logged, so that a rebuild of the tools does not log them
	// again.
	reported atomic.Pointer[Document]
}

var (
	_ caddy.Provisioner       = (*Source)(nil)
	_ caddyfile.Unmarshaler   = (*Source)(nil)
	_ pipeline.Source         = (*Source)(nil)
	_ pipeline.ChangeNotifier = (*Source)(nil)
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
	if s.OutputSchema != "" && s.OutputSchema != "off" && s.OutputSchema != "strict" {
		return fmt.Errorf("openapi %s: output_schema %q: want strict or off", spec, s.OutputSchema)
	}
	built, err := s.Config.Build(ctx, repl)
	if err != nil {
		return fmt.Errorf("openapi %s: %v", spec, err)
	}
	s.built = built
	opts := LoadOptions{MaxSize: s.MaxSpecSize, Timeout: time.Duration(s.LoadTimeout), AllowExternalRefs: s.AllowExternalRefs, Strict: s.Strict}
	doc, err := Load(ctx, spec, opts)
	if err != nil {
		return err
	}
	if s.sendsSecrets() && s.BaseURL == "" {
		return fmt.Errorf("openapi %s: %s", spec, baseURLRequired(doc))
	}
	s.live = new(liveDoc)
	s.live.doc.Store(doc)
	if err := (Options{Include: s.Include, Exclude: s.Exclude}).Check(); err != nil {
		return fmt.Errorf("openapi %s: %v", spec, err)
	}
	if s.Refresh > 0 {
		// The config's context ends when Caddy unloads it, and the loop
		// with it.
		go s.refreshLoop(ctx, spec, opts, time.Duration(s.Refresh))
	}
	return nil
}

// sendsSecrets reports whether the source's requests carry anything of
// the gateway's: a credential or a static header. Those travel only to
// the origin the operator names with base_url. Taken from the document's
// servers[0], they would go wherever the document points, and a remote
// document (or a local one another process rewrites) changes that without
// the operator: on a refresh, at a reload, at a restart.
func (s *Source) sendsSecrets() bool {
	return len(s.Config.Credentials) > 0 || len(s.Config.Headers) > 0
}

// baseURLRequired is the error of a source that sends credentials without
// base_url; doc, when read, names where its servers[0] points.
func baseURLRequired(doc *Document) string {
	msg := "credentials and headers are sent only to the origin base_url names: set base_url"
	if doc != nil {
		if u, err := baseURL(doc, ""); err == nil {
			msg += " (the document's servers[0] is " + u.Redacted() + ")"
		}
	}
	return msg
}

// Cleanup releases what the credentials hold (a per_caller Redis client).
func (s *Source) Cleanup() error {
	s.built.Close()
	return nil
}

// OnChange implements pipeline.ChangeNotifier.
func (s *Source) OnChange(changed func()) { s.live.changed.Store(&changed) }

// refreshLoop re-reads the document every interval. A document that does
// not load keeps the one that did (logged); one whose bytes changed
// replaces it, and the gateway is told.
func (s *Source) refreshLoop(ctx context.Context, spec string, opts LoadOptions, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		doc, err := Load(ctx, spec, opts)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("openapi source: refresh failed; the previous document stays", zap.String("spec", upstream.ShownURL(spec)), zap.Error(upstream.WithoutQuery(err)))
			}
			continue
		}
		if doc.Digest == s.live.doc.Load().Digest {
			continue
		}
		s.live.doc.Store(doc)
		s.log.Info("openapi source: the document changed", zap.String("spec", upstream.ShownURL(spec)))
		if f := s.live.changed.Load(); f != nil {
			(*f)()
		}
	}
}

// SelectsTools implements pipeline.SelectsTools: include and exclude are
// the source's own (operationId, tag, method or path patterns).
func (*Source) SelectsTools() {}

// Tools implements pipeline.Source.
func (s *Source) Tools(namespace string) ([]*pipeline.Tool, error) {
	doc := s.live.doc.Load()
	tools, report, err := Tools(doc, Config{
		Options:            Options{Prefix: namespace, Include: s.Include, Exclude: s.Exclude, Deprecated: s.Deprecated, Strict: s.Strict},
		BaseURL:            caddy.NewReplacer().ReplaceKnown(s.BaseURL, ""),
		Credentials:        s.built.Credentials,
		Retry:              s.built.Retry,
		Breaker:            s.built.Breaker,
		MaxResponseSize:    s.built.MaxResponseSize,
		Timeout:            s.built.Timeout,
		CacheTTL:           time.Duration(s.Cache),
		CacheRespect:       s.CacheRespect,
		CacheOperations:    s.CacheOperations,
		Set:                s.Set,
		OutputSchemaStrict: s.OutputSchema == "strict",
	})
	if err != nil {
		return nil, fmt.Errorf("openapi %s: %v", doc.Location, err)
	}
	if s.log != nil && s.live.reported.Swap(doc) != doc {
		logReport(s.log, doc, report)
	}
	if s.log != nil {
		s.log.Debug("openapi source tools", zap.String("spec", upstream.ShownURL(doc.Location)), zap.Int("tools", len(tools)), zap.Bool("converted_from_swagger2", doc.Converted))
	}
	return tools, nil
}

// logReport says, once per document, what of it is not served as written:
// each operation left out on a line of its own (naming it and why), the
// validation findings that change no call, and the patterns left out of
// the published schemas (a line each, with counts and the first few).
func logReport(log *zap.Logger, doc *Document, report Report) {
	for _, sk := range report.Skipped {
		log.Warn("openapi source: operation left out", zap.String("spec", upstream.ShownURL(doc.Location)),
			zap.String("operation", sk.Operation), zap.String("reason", sk.Reason))
	}
	if n := len(doc.Findings); n > 0 {
		log.Warn("openapi source: validation findings that change no call; the operations are served",
			zap.String("spec", upstream.ShownURL(doc.Location)), zap.Int("findings", n), zap.Strings("first", doc.Findings[:min(n, 5)]))
	}
	if n := len(report.Patterns); n > 0 {
		log.Warn("openapi source: patterns left out of the published schemas (clients compile patterns as ECMAScript with the u flag; these have no such form)",
			zap.String("spec", upstream.ShownURL(doc.Location)), zap.Int("patterns", n), zap.Strings("first", report.Patterns[:min(n, 5)]))
	}
}

// UnmarshalCaddyfile reads `openapi <file-or-url> { ... }` (the source's
// name has been read by the mcp directive).
func (s *Source) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // "openapi"
	if !d.AllArgs(&s.Spec) {
		return d.Errf("usage: source <name> openapi <file-or-url> { ... }")
	}
	var secrets error // where the first credential or header is, for the error if base_url is missing
	file, line := d.File(), d.Line()
	for d.NextBlock(0) {
		if sub := d.Val(); (sub == "credential" || sub == "header") && secrets == nil {
			secrets = d.Errf("openapi source: %s", baseURLRequired(nil))
		}
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
		case "include", "exclude", "cache_operations":
			globs := d.RemainingArgs()
			if len(globs) == 0 {
				return d.Errf("%s needs at least one pattern (operationId, tag, method or path, with * and ?)", sub)
			}
			if err := (Options{Include: globs}).Check(); err != nil {
				return d.Errf("%s: %v", sub, err)
			}
			switch sub {
			case "include":
				s.Include = append(s.Include, globs...)
			case "exclude":
				s.Exclude = append(s.Exclude, globs...)
			default:
				s.CacheOperations = append(s.CacheOperations, globs...)
			}
		case "deprecated", "allow_external_refs", "strict":
			if d.NextArg() {
				return d.ArgErr()
			}
			switch sub {
			case "deprecated":
				s.Deprecated = true
			case "strict":
				s.Strict = true
			default:
				s.AllowExternalRefs = true
			}
		case "output_schema":
			if !d.AllArgs(&s.OutputSchema) || s.OutputSchema != "strict" && s.OutputSchema != "off" {
				return d.Errf("usage: output_schema strict|off")
			}
		case "max_spec_size":
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			n, err := pipeline.ParseSize(v)
			if err != nil {
				return d.Errf("max_spec_size: %v", err)
			}
			s.MaxSpecSize = n
		case "cache":
			args := d.RemainingArgs()
			if len(args) == 0 || len(args) > 2 || (len(args) == 2 && args[1] != "respect") {
				return d.Errf("usage: cache <ttl> [respect]")
			}
			dur, err := caddy.ParseDuration(args[0])
			if err != nil || dur <= 0 {
				return d.Errf("cache: %q is not a positive duration", args[0])
			}
			s.Cache, s.CacheRespect = caddy.Duration(dur), len(args) == 2
		case "set":
			if err := upstream.UnmarshalSet(d, &s.Set); err != nil {
				return err
			}
		case "refresh":
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("refresh: %q is not a positive duration", v)
			}
			s.Refresh = caddy.Duration(dur)
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
			return d.Errf("openapi source: unrecognized sub-directive %q (want base_url, include, exclude, deprecated, strict, output_schema, allow_external_refs, max_spec_size, load_timeout, refresh, cache, cache_operations, set, credential, header, retries, circuit_breaker, timeout, max_response_size)", sub)
		}
	}
	if secrets != nil && s.BaseURL == "" {
		return secrets
	}
	if s.BaseURL == "" {
		// A document read from a file has no URL to resolve a relative
		// server against: say so now, at the source's line, rather than
		// when the config is loaded.
		if server, relative := fileServer(caddy.NewReplacer().ReplaceKnown(s.Spec, ""), s.MaxSpecSize); relative {
			return fmt.Errorf("openapi %s: %s, and a document read from a file has no URL to resolve it against: set base_url, at %s:%d", s.Spec, server, file, line)
		}
	}
	return nil
}
