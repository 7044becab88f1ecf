package override

import (
	"fmt"
	"sort"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/edgemcp/edgemcp/pipeline"
)

func init() { caddy.RegisterModule(Module{}) }

// Module is one source's overrides as the guest module
// mcp.overrides.tools: the shell takes the override lines out of a
// source's block (whatever the source's type) and hands them to
// UnmarshalCaddyfile, then applies the module to the source's tools
// (pipeline.ToolOverrides). It is a module so that the shell reaches it
// through Caddy's registry, as it reaches the sources.
type Module struct {
	// Tools are the overrides by the name of the tool they change.
	Tools Overrides `json:"tools,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (Module) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.overrides.tools", New: func() caddy.Module { return new(Module) }}
}

// UnmarshalCaddyfile reads every override line d holds (Directives).
func (m *Module) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	for d.Next() {
		if err := m.Tools.Unmarshal(d); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks overrides that came as JSON, as the Caddyfile's parser
// checks each line.
func (m *Module) Validate() error {
	names := make([]string, 0, len(m.Tools))
	for name := range m.Tools {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if ov := m.Tools[name]; ov == nil {
			return fmt.Errorf("override of %q: empty", name)
		} else if err := ov.Check(); err != nil {
			return fmt.Errorf("override of %q: %v", name, err)
		}
	}
	return nil
}

// Apply implements pipeline.ToolOverrides.
func (m *Module) Apply(tools []*pipeline.Tool) ([]*pipeline.Tool, []string, error) {
	return m.Tools.Apply(tools)
}

// Interface guards.
var (
	_ caddyfile.Unmarshaler  = (*Module)(nil)
	_ caddy.Validator        = (*Module)(nil)
	_ pipeline.ToolOverrides = (*Module)(nil)
)
