package pin

import (
	"fmt"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Keys are the names tools are pinned under: the upstream's name for each
// (UpstreamName), which stays the same when the operator renames the tool
// or changes the source's prefix. Where two tools of one source share an
// upstream name (a GraphQL query and mutation field of one name), each of
// them is pinned under its gateway name instead.
func Keys(tools []*pipeline.Tool) []string {
	count := make(map[string]int, len(tools))
	for _, t := range tools {
		count[UpstreamName(t)]++
	}
	keys := make([]string, len(tools))
	for i, t := range tools {
		keys[i] = UpstreamName(t)
		if count[keys[i]] > 1 {
			keys[i] = t.Name
		}
	}
	return keys
}

// Of pins tools as they are now: what `caddy mcp pin` writes.
func Of(tools []*pipeline.Tool) (Pins, error) {
	pins := make(Pins, len(tools))
	for i, key := range Keys(tools) {
		def, err := Definition(tools[i])
		if err != nil {
			return nil, fmt.Errorf("tool %q: %v", tools[i].Name, err)
		}
		pins[key] = Pin{Hash: Hash(def), Definition: def}
	}
	return pins, nil
}

// Reason is why a tool is held.
type Reason string

const (
	// Changed: the tool's definition is not the pinned one.
	Changed Reason = "changed"
	// New: the tool has no pin, and the source does not say `pin new allow`.
	New Reason = "new"
	// Unreadable: the tool's definition is not JSON the gateway can hash.
	Unreadable Reason = "unreadable"
)

// Held is a tool kept out of the registry: not listed, not callable.
type Held struct {
	Tool   *pipeline.Tool
	Key    string // what it is pinned under (Keys)
	Reason Reason
	// Pinned is the pin's hash ("" for a new tool); Current the hash of
	// the definition the source gives now ("" when unreadable).
	Pinned, Current string
	// Changes say what changed (Diff); empty unless Reason is Changed.
	Changes []string
}

// Verdict is Check's decision over one source's tools.
type Verdict struct {
	// Served are the tools whose definition is pinned, and, with `pin new
	// allow`, the new ones: the registry gets these.
	Served []*pipeline.Tool
	// Unpinned are the keys of the new tools served by `pin new allow`.
	Unpinned []string
	// Held are the tools kept out, in the source's order.
	Held []Held
	// Gone are the keys of pins the source no longer has a tool for.
	Gone []string
}

// Check decides which of a source's tools, as its source gives them now
// (before the operator's overrides), match their pins. Run it at load and
// on every refresh or list_changed. allowNew is `pin new allow`.
func Check(pins Pins, tools []*pipeline.Tool, allowNew bool) Verdict {
	var v Verdict
	seen := make(map[string]bool, len(tools))
	for i, key := range Keys(tools) {
		t := tools[i]
		seen[key] = true
		p, pinned := pins[key]
		def, err := Definition(t)
		switch {
		case err != nil:
			v.Held = append(v.Held, Held{Tool: t, Key: key, Reason: Unreadable, Pinned: p.Hash, Changes: []string{err.Error()}})
		case !pinned && allowNew:
			v.Served = append(v.Served, t)
			v.Unpinned = append(v.Unpinned, key)
		case !pinned:
			v.Held = append(v.Held, Held{Tool: t, Key: key, Reason: New, Current: Hash(def)})
		case Hash(def) != p.Hash:
			v.Held = append(v.Held, Held{Tool: t, Key: key, Reason: Changed, Pinned: p.Hash, Current: Hash(def),
				Changes: Diff(p.Definition, def, MaxChanges)})
		default:
			v.Served = append(v.Served, t)
		}
	}
	for _, key := range pins.Keys() {
		if !seen[key] {
			v.Gone = append(v.Gone, key)
		}
	}
	return v
}

// Message is the one line a held tool's warning says, without its diff.
func (h Held) Message() string {
	switch h.Reason {
	case Changed:
		return "its definition changed since it was pinned: review the change, then pin it again with caddy mcp pin"
	case New:
		return "it has no pin: review it, then pin it with caddy mcp pin (or let the source serve new tools with pin new allow)"
	}
	return "its definition cannot be read"
}
