package caddymodule

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/caddymodule/sourcetools"
	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/pin"
)

// Sources are backends that bring their own tools (README, Sources): guest
// modules mcp.sources.<type> (openapi, ...), added to a build with xcaddy
// like any Caddy module. The shell parses and loads them; what the gateway
// does with their tools (namespace, selection, aliases, watching) is
// package sourcetools'.

// SourceConfig is `source <name> <type> ... { ... }`.
type SourceConfig struct {
	// Name is the source's namespace: its tools are named <name>_<tool>.
	Name      string          `json:"name"`
	SourceRaw json.RawMessage `json:"source" caddy:"namespace=mcp.sources inline_key=source"`
	// Approval is "required" or "writes" (parseApproval).
	Approval string `json:"approval,omitempty"`
	// Task is the default of its tools that the upstream does not run as
	// tasks itself: they run as the gateway's tasks (TaskConfig).
	Task *TaskConfig `json:"task,omitempty"`
	// SourceSelection: prefix, disable, include, exclude.
	SourceSelection
	// OverridesRaw are the operator's overrides of the source's tools
	// (rename, describe, hide, annotate), a guest module mcp.overrides.*
	// (pipeline.ToolOverrides).
	OverridesRaw json.RawMessage `json:"overrides,omitempty" caddy:"namespace=mcp.overrides inline_key=overrides"`
	// Pin holds the source's tools to the definitions in a pin file
	// (`pin <file>`, `pin new allow`); nil: not pinned.
	Pin *pin.Config `json:"pin,omitempty"`
}

// sourceName is what a namespace may be: it starts every tool name.
var sourceName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,31}$`)

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
		st := &sourcetools.Source{Name: cfg.Name, Namespace: cfg.namespace(), Approval: cfg.Approval, Src: src,
			Disable: cfg.Disable, Include: cfg.Include, Exclude: cfg.Exclude}
		if err := cfg.loadGovernance(ctx, st); err != nil {
			return err
		}
		h.sources = append(h.sources, st)
	}
	return nil
}

// loadGovernance gives st the source's pins, read now from the pin file
// (a missing or altered file fails the load: a source meant to be pinned
// is never served unpinned), and its overrides module.
func (cfg *SourceConfig) loadGovernance(ctx caddy.Context, st *sourcetools.Source) error {
	if cfg.Pin != nil {
		if cfg.Pin.File == "" {
			return fmt.Errorf("source %q: pin: no file", cfg.Name)
		}
		pins, err := cfg.Pin.Load(cfg.Name)
		if err != nil {
			return fmt.Errorf("source %q: %v", cfg.Name, err)
		}
		if pins == nil {
			pins = pin.Pins{} // a file that names none of the source's tools pins them all as new
		}
		st.Pins, st.AllowNew = pins, cfg.Pin.AllowNew
	}
	if cfg.OverridesRaw != nil {
		mod, err := ctx.LoadModule(cfg, "OverridesRaw")
		if err != nil {
			return fmt.Errorf("source %q: overrides: %v", cfg.Name, err)
		}
		ov, ok := mod.(pipeline.ToolOverrides)
		if !ok {
			return fmt.Errorf("source %q: module %T does not override tools", cfg.Name, mod)
		}
		st.Overrides = ov
	}
	return nil
}

// sourceTools are the sources' tools as they are now, and those their
// pins hold back (sourcetools.Tools). Each runs the
// endpoint's default_auth check in its authentication stage, so that its
// call carries the verified identity (per-caller credentials and the
// identity-scoped cache key need it).
func (h *Handler) sourceTools() ([]*pipeline.Tool, []sourcetools.Held, error) {
	return sourcetools.Tools(h.sources, h.logger, func(s *sourcetools.Source, t *pipeline.Tool) error {
		if t.Auth == nil && h.defaultAuth != nil {
			t.Auth = h.defaultAuth
		}
		if len(t.FromIdentity) > 0 && t.Auth == nil {
			return fmt.Errorf("tool %q takes values from the caller's identity (%s) and the endpoint has no default_auth to verify it", t.Name, strings.Join(t.FromIdentity, ", "))
		}
		if err := h.applyApproval(t, "", s.Approval); err != nil {
			return err
		}
		return withTask(t, nil, h.sourceTask(s))
	})
}

// exposeHeld reports each pinned source's held tools as the metric
// edgemcp_tools_held{source,reason}, read from the current version of the
// tools at every scrape.
func (h *Handler) exposeHeld() {
	if h.live == nil {
		h.live = new(liveTools) // made before a scrape can read it
	}
	live := h.live
	for _, s := range h.sources {
		if s.Pins == nil {
			continue
		}
		name := s.Name
		telemetry.ExposeHeld(h, name, func() map[string]int {
			counts := map[string]int{}
			if r := live.reg.Load(); r != nil { // nil: scraped before the first version is made
				for _, held := range r.held {
					if held.Source == name {
						counts[string(held.Reason)]++
					}
				}
			}
			return counts
		})
	}
}
