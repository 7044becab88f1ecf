// Package sourcetools is the gateway's side of the tool sources (guest
// modules mcp.sources.<type>, provisioned by the shell): a source's tools
// named into its namespace, selected (disable, include, exclude), given
// the aliases every source tool answers to, held to their pins and
// overridden by the operator (docs/governance.md), checked against each
// other's names, and rebuilt when a source says they changed.
package sourcetools

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/pin"
)

// Source is a provisioned source module under its name.
type Source struct {
	Name string
	// Namespace is what its tools are named into ("" for their own names).
	Namespace string
	// Approval is the source's approval policy.
	Approval string
	Src      pipeline.Source
	// Disable, Include and Exclude select its tools (Select).
	Disable, Include, Exclude []string
	// Pins hold its tools to the definitions the operator approved (nil:
	// the source is not pinned); AllowNew serves a tool with no pin.
	Pins     pin.Pins
	AllowNew bool
	// Overrides are the operator's changes to its tools (nil: none).
	Overrides pipeline.ToolOverrides

	// reported is what the last Tools logged of the source, by tool key,
	// so that a refresh that changes nothing logs nothing again.
	reported map[string]string
}

// Upstream are the source's tools as its upstream gives them now,
// selected (disable, include, exclude) and aliased, before the pins and
// the overrides: what a pin covers, and what `caddy mcp pin` writes.
func (s *Source) Upstream(log *zap.Logger) ([]*pipeline.Tool, error) {
	got, err := s.Src.Tools(s.Namespace)
	if err != nil {
		return nil, fmt.Errorf("source %q: %v", s.Name, err)
	}
	got = s.Select(got, log)
	for _, t := range got {
		t.Source = s.Name
	}
	return got, nil
}

// Tools are the sources' tools as they are now: selected and aliased,
// held to their pins (Govern), overridden; prepare gives each tool what
// the shell adds (its auth, its approval, which follows the operator's
// annotate) and may refuse it. held are the tools the pins keep out. A
// disable naming no tool is logged on log.
func Tools(sources []*Source, log *zap.Logger, prepare func(s *Source, t *pipeline.Tool) error) (tools []*pipeline.Tool, held []Held, err error) {
	for _, s := range sources {
		got, err := s.Upstream(log)
		if err != nil {
			return nil, nil, err
		}
		got, h, err := s.Govern(got, log)
		if err != nil {
			return nil, nil, fmt.Errorf("source %q: %v", s.Name, err)
		}
		held = append(held, h...)
		for _, t := range got {
			if err := prepare(s, t); err != nil {
				return nil, nil, fmt.Errorf("source %q: %v", s.Name, err)
			}
		}
		tools = append(tools, got...)
	}
	return tools, held, nil
}

// CheckNames refuses a source tool with a declared tool's name, or two
// sources' tools with one name, naming both.
func CheckNames(declared, sourced []*pipeline.Tool) error {
	owner := make(map[string]string, len(declared)+len(sourced))
	for _, t := range declared {
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

// Watch asks the sources that can change to say when they did, and runs
// rebuild then. Their changes are coalesced: a burst of them (an
// upstream's flood of list_changed) costs two rebuilds, the one in flight
// and one after it.
func Watch(sources []*Source, rebuild func()) {
	c := pipeline.NewCoalescer(rebuild)
	for _, s := range sources {
		if n, ok := s.Src.(pipeline.ChangeNotifier); ok {
			n.OnChange(c.Trigger)
		}
	}
}
