package graphql

import (
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// DefaultDepth is how many levels of fields a generated selection set
// reaches below the root field (`depth`).
const DefaultDepth = 2

// Selection is the selection set generated for a field of type t: its
// scalar and enum fields, and those of the objects below it to depth
// levels (a connection's edges { node } counts as one level), a type
// already on the path left out (the cycle is cut), fields that need
// arguments left out, within limits for a document whose root field has
// this selection. It is "" for a scalar or enum type, and never an empty
// set: "{ __typename }" at least.
func Selection(s *ast.Schema, t *ast.Type, depth int, limits Limits) string {
	def := s.Types[t.Name()]
	if def == nil || !def.IsCompositeType() {
		return ""
	}
	limits = limits.withDefaults()
	// The root field is one field at depth 1.
	g := &generator{s: s, budget: limits.MaxFields - 1, nestLeft: limits.MaxDepth - 1, path: map[string]bool{},
		steps: maxSteps}
	if depth < 1 {
		depth = 1
	}
	sel := g.selectType(def, depth)
	if len(sel) == 0 {
		return "{ __typename }"
	}
	return "{ " + strings.Join(sel, " ") + " }"
}

type generator struct {
	s        *ast.Schema
	budget   int // fields still allowed
	nestLeft int // levels of nesting still allowed
	path     map[string]bool
	// steps bounds the types visited: objects without leaves within
	// reach are visited and left out, which could otherwise take
	// exponential time in a wide schema.
	steps int
}

// maxSteps bounds the types one generation visits.
const maxSteps = 10000

// selectType returns the selections of a value of type def at levels.
func (g *generator) selectType(def *ast.Definition, levels int) []string {
	if levels < 1 || g.nestLeft < 1 || g.path[def.Name] || g.steps <= 0 {
		return nil
	}
	g.steps--
	g.path[def.Name] = true
	g.nestLeft--
	defer func() { delete(g.path, def.Name); g.nestLeft++ }()
	if def.Kind == ast.Union {
		if !g.take(1) {
			return nil
		}
		out := []string{"__typename"}
		g.nestLeft++ // a member's fields are at the union's own level
		defer func() { g.nestLeft-- }()
		for _, member := range def.Types {
			m := g.s.Types[member]
			if m == nil {
				continue
			}
			if sel := g.selectType(m, levels); len(sel) > 0 {
				out = append(out, "... on "+m.Name+" { "+strings.Join(sel, " ")+" }")
			}
		}
		return out
	}
	var out []string
	// Leaves first, so that a tight budget keeps them over deeper objects.
	for _, f := range def.Fields {
		if !selectable(f) || !g.isLeaf(f.Type) {
			continue
		}
		if !g.take(1) {
			return out
		}
		out = append(out, f.Name)
	}
	for _, f := range def.Fields {
		if !selectable(f) || g.isLeaf(f.Type) {
			continue
		}
		child := g.s.Types[f.Type.Name()]
		if child == nil || g.path[child.Name] {
			continue
		}
		next := levels - 1
		if f.Name == "edges" && child.Fields.ForName("node") != nil {
			next = levels // a connection's edges and their node are one level
		}
		if !g.take(1) {
			return out
		}
		sel := g.selectType(child, next)
		if len(sel) == 0 {
			g.budget++ // the field is left out: give its place back
			continue
		}
		out = append(out, f.Name+" { "+strings.Join(sel, " ")+" }")
	}
	return out
}

// take spends n fields of the budget, reporting whether there were n.
func (g *generator) take(n int) bool {
	if g.budget < n {
		return false
	}
	g.budget -= n
	return true
}

func (g *generator) isLeaf(t *ast.Type) bool {
	def := g.s.Types[t.Name()]
	return def != nil && (def.Kind == ast.Scalar || def.Kind == ast.Enum)
}

// selectable says a generated selection may name f: not introspection,
// and no argument it must be given.
func selectable(f *ast.FieldDefinition) bool {
	if strings.HasPrefix(f.Name, "__") {
		return false
	}
	for _, a := range f.Arguments {
		if a.Type.NonNull && a.DefaultValue == nil {
			return false
		}
	}
	return true
}
