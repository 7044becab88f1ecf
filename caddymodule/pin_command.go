package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/caddymodule/cli"
	"github.com/edgemcp/edgemcp/caddymodule/sourcetools"
	"github.com/edgemcp/edgemcp/pipeline"
)

// pinSources connects the pinned sources of one mcp handler, from its
// JSON, for `caddy mcp pin`: each source module is provisioned as the
// gateway provisions it (nothing else of the handler is), and its tools
// are read as the gateway reads them before the pins and the overrides
// (sourcetools.Source.Upstream). done ends the modules (a stdio child
// stops).
func pinSources(raw json.RawMessage) ([]cli.PinSource, func(), error) {
	var h Handler
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, nil, fmt.Errorf("mcp handler: %v", err)
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	if h.DefaultAuth != nil {
		ctx = ctx.WithValue(pipeline.VerifiedCallersKey{}, true)
	}
	var out []cli.PinSource
	for i := range h.Sources {
		cfg := &h.Sources[i]
		if cfg.Pin == nil {
			continue
		}
		if err := cfg.SourceSelection.validate(cfg.Name); err != nil {
			return nil, cancel, err
		}
		mod, err := ctx.LoadModule(cfg, "SourceRaw")
		if err != nil {
			return nil, cancel, fmt.Errorf("source %q: %v", cfg.Name, err)
		}
		src, ok := mod.(pipeline.Source)
		if !ok {
			return nil, cancel, fmt.Errorf("source %q: module %T is not a source", cfg.Name, mod)
		}
		st := &sourcetools.Source{Name: cfg.Name, Namespace: cfg.namespace(), Src: src,
			Disable: cfg.Disable, Include: cfg.Include, Exclude: cfg.Exclude}
		tools, err := st.Upstream(nil)
		if err != nil {
			return nil, cancel, err
		}
		out = append(out, cli.PinSource{Name: cfg.Name, File: cfg.Pin.File, Tools: tools})
	}
	return out, cancel, nil
}
