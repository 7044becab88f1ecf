package caddymodule

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Sources are backends that bring their own tools (README, Sources): guest
// modules mcp.sources.<type> (openapi, ...), added to a build with xcaddy
// like any Caddy module. The gateway names each source's tools into the
// source's namespace and serves them beside the declared tools.

// SourceConfig is `source <name> <type> ... { ... }`.
type SourceConfig struct {
	// Name is the source's namespace: its tools are named <name>_<tool>.
	Name      string          `json:"name"`
	SourceRaw json.RawMessage `json:"source" caddy:"namespace=mcp.sources inline_key=source"`
	// Approval is "required" or "writes" (parseApproval).
	Approval string `json:"approval,omitempty"`
	// SourceSelection: prefix, disable, include, exclude (source_select.go).
	SourceSelection
}

// sourceName is what a namespace may be: it starts every tool name.
var sourceName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,31}$`)

// loadedSource is a provisioned source module under its name.
type loadedSource struct {
	name     string
	cfg      *SourceConfig
	src      pipeline.Source
	approval string // the source's approval policy
}

// provisionSources loads the source modules. Caddy provisions each module
// and cleans it up with this config.
func (h *Handler) provisionSources(ctx caddy.Context) error {
	h.sources = nil
	seen := map[string]bool{}
	if h.defaultAuth != nil {
		ctx = ctx.WithValue(pipeline.VerifiedCallersKey{}, true)
	}
	for i := range h.Sources {
		cfg := &h.Sources[i]
		if !sourceName.MatchString(cfg.Name) {
			return fmt.Errorf("source %q: the name must match %s", cfg.Name, sourceName)
		}
		if seen[cfg.Name] {
			return fmt.Errorf("source %q declared twice", cfg.Name)
		}
		seen[cfg.Name] = true
		if err := cfg.SourceSelection.validate(cfg.Name); err != nil {
			return err
		}
		mod, err := ctx.LoadModule(cfg, "SourceRaw")
		if err != nil {
			return fmt.Errorf("source %q: %v", cfg.Name, err)
		}
		src, ok := mod.(pipeline.Source)
		if !ok {
			return fmt.Errorf("source %q: module %T is not a source", cfg.Name, mod)
		}
		h.sources = append(h.sources, loadedSource{name: cfg.Name, cfg: cfg, src: src, approval: cfg.Approval})
	}
	return nil
}

// sourceTools are the sources' tools as they are now. Each runs the
// endpoint's default_auth check in its authentication stage, so that its
// call carries the verified identity (per-caller credentials and the
// identity-scoped cache key need it).
func (h *Handler) sourceTools() ([]*pipeline.Tool, error) {
	var tools []*pipeline.Tool
	for _, s := range h.sources {
		got, err := s.src.Tools(s.cfg.namespace())
		if err != nil {
			return nil, fmt.Errorf("source %q: %v", s.name, err)
		}
		got = h.selectTools(s.cfg, got)
		for _, t := range got {
			t.Source = s.name
			if t.Auth == nil && h.defaultAuth != nil {
				t.Auth = h.defaultAuth
			}
			if len(t.FromIdentity) > 0 && t.Auth == nil {
				return nil, fmt.Errorf("source %q: tool %q takes values from the caller's identity (%s) and the endpoint has no default_auth to verify it", s.name, t.Name, strings.Join(t.FromIdentity, ", "))
			}
			if err := h.applyApproval(t, "", s.approval); err != nil {
				return nil, fmt.Errorf("source %q: %v", s.name, err)
			}
		}
		tools = append(tools, got...)
	}
	return tools, nil
}

// checkSourceNames refuses a source tool with a declared tool's name, or
// two sources' tools with one name, naming both.
func (h *Handler) checkSourceNames(sourced []*pipeline.Tool) error {
	owner := make(map[string]string, len(h.declared)+len(sourced))
	for _, t := range h.declared {
		owner[t.Name] = "a declared tool"
	}
	for _, t := range sourced {
		if o, taken := owner[t.Name]; taken {
			return fmt.Errorf("source %q: its tool %q has the name of %s", t.Source, t.Name, o)
		}
		owner[t.Name] = fmt.Sprintf("a tool of source %q", t.Source)
	}
	return nil
}

// watchSources asks the sources that can change to say when they did.
// Their changes are coalesced: a burst of them (an upstream's flood of
// list_changed) costs two rebuilds, the one in flight and one after it.
func (h *Handler) watchSources() {
	rebuild := pipeline.NewCoalescer(h.swapTools)
	for _, s := range h.sources {
		if n, ok := s.src.(pipeline.ChangeNotifier); ok {
			n.OnChange(rebuild.Trigger)
		}
	}
}
