package sourcetools

import (
	"path"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
)

// original is a source tool's own name: what the source says, else its
// name without the namespace.
func original(t *pipeline.Tool, namespace string) string {
	if t.Original != "" {
		return t.Original
	}
	if namespace != "" {
		if o, ok := strings.CutPrefix(t.Name, pipeline.ToolName(namespace, "")+"_"); ok {
			return o
		}
	}
	return t.Name
}

// selectionNames are the names a selection matches a tool by: its name,
// its original name, and the original under the source's name.
func selectionNames(t *pipeline.Tool, source, orig string) []string {
	return []string{t.Name, orig, source + "." + orig, source + "/" + orig}
}

// Select applies disable, include and exclude to the source's tools and
// adds the aliases every source tool answers to. A disable naming no tool
// is logged (log may be nil): the source may bring it later (a refreshed
// document).
func (s *Source) Select(tools []*pipeline.Tool, log *zap.Logger) []*pipeline.Tool {
	used := make(map[string]bool, len(s.Disable))
	kept := tools[:0]
	for _, t := range tools {
		orig := original(t, s.Namespace)
		names := selectionNames(t, s.Name, orig)
		if d := slices.IndexFunc(s.Disable, func(n string) bool { return slices.Contains(names, n) }); d >= 0 {
			used[s.Disable[d]] = true
			continue
		}
		if len(s.Include) > 0 && !matchAny(s.Include, t.Name, orig) || matchAny(s.Exclude, t.Name, orig) {
			continue
		}
		t.Aliases = s.aliases(t, orig)
		kept = append(kept, t)
	}
	for _, d := range s.Disable {
		if !used[d] && log != nil {
			log.Warn("disable names no tool of the source", zap.String("source", s.Name), zap.String("tool", d))
		}
	}
	return kept
}

func matchAny(globs []string, names ...string) bool {
	for _, g := range globs {
		for _, n := range names {
			if ok, _ := path.Match(g, n); ok {
				return true
			}
		}
	}
	return false
}

// aliases are the source's own aliases of t plus <source>.<original>,
// <source>/<original> and <original> (and the same under a prefix), never
// the tool's own name. An alias two tools claim is dropped by the engine.
func (s *Source) aliases(t *pipeline.Tool, orig string) []string {
	out := slices.Clone(t.Aliases)
	add := func(a string) {
		if a != t.Name && a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	add(s.Name + "." + orig)
	add(s.Name + "/" + orig)
	add(orig)
	if ns := s.Namespace; ns != "" && ns != s.Name {
		add(ns + "." + orig)
		add(ns + "/" + orig)
	}
	return out
}
