// Package override applies the operator's overrides to a source's tools
// (docs/governance.md, Overrides): rename, describe, hide (with set) and
// annotate, per tool. They change the tool values themselves, before the
// gateway builds its registry, so that listings, search, the catalog,
// aliases, approvals and policies all see one tool. A pin covers the
// upstream's definition (pipeline/pin), not what an override made of it:
// the gateway checks pins first, then applies overrides.
package override

import (
	"fmt"
	"slices"
	"sort"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// Overrides are one source's overrides, by the name of the tool they
// change: its gateway name or its upstream name (Original).
type Overrides map[string]*Override

// Override is what the operator changes of one tool.
type Override struct {
	// Rename is the name clients see instead (`rename <tool> <new>`),
	// exactly as given: no namespace is added. The tool's former gateway
	// name and its upstream name stay aliases of it.
	Rename string `json:"rename,omitempty"`
	// Description replaces the upstream's (`describe <tool> "<text>"`).
	Description *string `json:"description,omitempty"`
	// Hide takes arguments out of the tool (`hide <tool> <arg...>`): they
	// leave its input schema and a caller who sends one is refused
	// (-32000). Set gives a hidden argument the value every call sends (a
	// literal, {{ auth.subject }} or {{ auth.claims.NAME }}, as a source's
	// `set`); a hidden argument without one is not sent at all.
	Hide []string          `json:"hide,omitempty"`
	Set  map[string]string `json:"set,omitempty"`
	// Annotate states the tool's behaviour hints in the operator's words,
	// over the upstream's (Hints).
	Annotate []string `json:"annotate,omitempty"`
}

// Apply returns tools with the overrides applied, each changed tool a
// copy (the source's own values are left as they were). unused are the
// overrides that named no tool: the gateway warns, since a source may
// bring the tool later (a refresh). An override that cannot apply (an
// argument the tool does not have, a name a client cannot call) is an
// error naming the tool: serving the tool without the operator's
// narrowing would serve more than they allowed.
func (o Overrides) Apply(tools []*pipeline.Tool) (out []*pipeline.Tool, unused []string, err error) {
	used := make(map[string]bool, len(o))
	out = make([]*pipeline.Tool, len(tools))
	for i, t := range tools {
		out[i] = t
		keys := o.keys(t)
		if len(keys) == 0 {
			continue
		}
		ov, err := o.merged(keys)
		if err == nil {
			out[i], err = ov.apply(t)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("tool %q: %v", keys[0], err)
		}
		for _, k := range keys {
			used[k] = true
		}
	}
	for key := range o {
		if !used[key] {
			unused = append(unused, key)
		}
	}
	sort.Strings(unused)
	return out, unused, nil
}

// keys are the names o has overrides of t under: its gateway name, its
// upstream name, and the name a rename under either gives it (so that
// `rename create_issue open_ticket` can be followed by `describe
// open_ticket ...`).
func (o Overrides) keys(t *pipeline.Tool) []string {
	var keys []string
	for _, k := range []string{t.Name, t.Original} {
		if o[k] != nil && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range slices.Clone(keys) {
		if r := o[k].Rename; r != "" && o[r] != nil && !slices.Contains(keys, r) {
			keys = append(keys, r)
		}
	}
	return keys
}

// merged is one override made of the lines given under each of keys (a
// tool may be named by its gateway name on one line, its upstream name or
// its new name on another); a setting given under two names is an error.
func (o Overrides) merged(keys []string) (*Override, error) {
	m := o[keys[0]]
	for _, k := range keys[1:] {
		var err error
		if m, err = merge(m, o[k], keys[0], k); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// merge is a and b, the lines given under the names ka and kb of one tool.
func merge(a, b *Override, ka, kb string) (*Override, error) {
	m := *a
	twice := func(what string) error {
		return fmt.Errorf("%s given for both %q and %q, names of one tool", what, ka, kb)
	}
	if b.Rename != "" {
		if m.Rename != "" {
			return nil, twice("rename")
		}
		m.Rename = b.Rename
	}
	if b.Description != nil {
		if m.Description != nil {
			return nil, twice("describe")
		}
		m.Description = b.Description
	}
	m.Hide = append(slices.Clone(a.Hide), b.Hide...)
	m.Annotate = append(slices.Clone(a.Annotate), b.Annotate...)
	m.Set = make(map[string]string, len(a.Set)+len(b.Set))
	for k, v := range a.Set {
		m.Set[k] = v
	}
	for k, v := range b.Set {
		if _, dup := m.Set[k]; dup {
			return nil, twice("set " + k)
		}
		m.Set[k] = v
	}
	return &m, nil
}

// Check reports an override that can never apply, whatever tool it meets.
func (ov *Override) Check() error {
	if ov.Rename != "" && !pipeline.ToolNamePattern.MatchString(ov.Rename) {
		return fmt.Errorf("rename %q: a tool name must match %s", ov.Rename, pipeline.ToolNamePattern)
	}
	if _, err := hints(ov.Annotate); err != nil {
		return err
	}
	for name, text := range ov.Set {
		if !slices.Contains(ov.Hide, name) {
			return fmt.Errorf("set %s: the argument is not hidden (hide it on the same line)", name)
		}
		if _, err := upstream.ParseFixed(text); err != nil {
			return fmt.Errorf("set %s: %v", name, err)
		}
	}
	return nil
}

func (ov *Override) apply(t *pipeline.Tool) (*pipeline.Tool, error) {
	if err := ov.Check(); err != nil {
		return nil, err
	}
	out := t
	if len(ov.Hide) > 0 {
		var err error
		if out, err = ov.hide(t); err != nil {
			return nil, err
		}
	}
	if out == t {
		c := *t
		out = &c
	}
	if ov.Description != nil {
		out.Description = *ov.Description
		if err := setListing(out, "description", *ov.Description); err != nil {
			return nil, err
		}
	}
	if len(ov.Annotate) > 0 {
		h, _ := hints(ov.Annotate)
		out.Annotations = h.over(out.Annotations)
		if err := setListingHints(out); err != nil {
			return nil, err
		}
	}
	if ov.Rename != "" && ov.Rename != out.Name {
		out.Aliases = append(slices.DeleteFunc(slices.Clone(out.Aliases), func(a string) bool { return a == ov.Rename }), out.Name)
		if out.Original != "" && !slices.Contains(out.Aliases, out.Original) {
			out.Aliases = append(out.Aliases, out.Original)
		}
		out.Name = ov.Rename
	}
	return out, nil
}

// hide takes ov.Hide out of t, with upstream.FixedArgs: the semantics of
// a source's `set`, for one tool.
func (ov *Override) hide(t *pipeline.Tool) (*pipeline.Tool, error) {
	if _, ok := t.Executor.(upstream.NamesFromArguments); ok {
		return nil, fmt.Errorf("hide: this source's arguments can make other names on the wire; fix a parameter with the source's own set")
	}
	props, required := schemaArguments(t)
	fixed := make(upstream.FixedArgs, len(ov.Hide))
	for _, name := range ov.Hide {
		if !props[name] {
			return nil, fmt.Errorf("hide %s: the tool has no such argument", name)
		}
		text, set := ov.Set[name]
		if !set {
			if required[name] {
				return nil, fmt.Errorf("hide %s: the tool requires it; give it a value with set", name)
			}
			fixed[name] = upstream.Omitted
			continue
		}
		f, err := upstream.ParseFixed(text)
		if err != nil {
			return nil, fmt.Errorf("set %s: %v", name, err)
		}
		fixed[name] = f
	}
	return fixed.Apply(t)
}
