package graphql

import (
	"sort"
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
// set: "{ __typename }" at least. A union is selected by member; a field
// that two members select with different types (URI! and URI) is
// aliased in the later member (name_Member), which GraphQL requires, and
// the answer is given back under the field's own name (restore).
func Selection(s *ast.Schema, t *ast.Type, depth int, limits Limits) string {
	return render(generate(s, t, depth, limits))
}

// picked is one selection of a generated set: a field, or a union
// member's inline fragment.
type picked struct {
	name  string    // the field; "" for an inline fragment
	alias string    // "" unless another member selects name with another shape
	typ   *ast.Type // the field's type
	on    string    // an inline fragment's member
	sub   []*picked
}

// generate is Selection as selections (nil for a scalar or enum type).
func generate(s *ast.Schema, t *ast.Type, depth int, limits Limits) []*picked {
	def := s.Types[t.Name()]
	if def == nil || !def.IsCompositeType() {
		return nil
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
		return []*picked{{name: "__typename", typ: typename}}
	}
	return sel
}

var typename = ast.NonNullNamedType("String", nil)

// render writes selections as GraphQL: "{ id owner { login } }".
func render(sel []*picked) string {
	if len(sel) == 0 {
		return ""
	}
	var b strings.Builder
	var write func([]*picked)
	write = func(sel []*picked) {
		b.WriteString("{")
		for _, p := range sel {
			b.WriteString(" ")
			switch {
			case p.on != "":
				b.WriteString("... on " + p.on + " ")
			case p.alias != "":
				b.WriteString(p.alias + ": " + p.name)
			default:
				b.WriteString(p.name)
			}
			if len(p.sub) > 0 {
				if p.on == "" {
					b.WriteString(" ")
				}
				write(p.sub)
			}
		}
		b.WriteString(" }")
	}
	write(sel)
	return b.String()
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
func (g *generator) selectType(def *ast.Definition, levels int) []*picked {
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
		out := []*picked{{name: "__typename", typ: typename}}
		g.nestLeft++ // a member's fields are at the union's own level
		defer func() { g.nestLeft-- }()
		for _, member := range def.Types {
			m := g.s.Types[member]
			if m == nil {
				continue
			}
			if sel := g.selectType(m, levels); len(sel) > 0 {
				out = append(out, &picked{on: m.Name, sub: sel})
			}
		}
		disambiguate(out)
		return out
	}
	var out []*picked
	// Leaves first, so that a tight budget keeps them over deeper objects.
	for _, f := range def.Fields {
		if !selectable(f) || !g.isLeaf(f.Type) {
			continue
		}
		if !g.take(1) {
			return out
		}
		out = append(out, &picked{name: f.Name, typ: f.Type})
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
		out = append(out, &picked{name: f.Name, typ: f.Type, sub: sel})
	}
	return out
}

// disambiguate aliases, in a union's selections, a member's field whose
// name an earlier member selects with another shape: GraphQL requires
// the fields one response key may hold to agree in type, nullability and
// (for objects) in their own fields' shapes, even on members that can
// never both apply. The alias is name_Member, made unique among the
// names the members select.
func disambiguate(union []*picked) {
	taken := map[string]bool{}
	for _, m := range union {
		taken[m.name] = true
		for _, f := range m.sub {
			taken[f.name] = true
		}
	}
	shapes := map[string]string{}
	for _, m := range union {
		fields := m.sub
		if m.on == "" {
			fields = []*picked{m} // __typename
		}
		for _, f := range fields {
			sh := shape(f)
			first, seen := shapes[f.name]
			if !seen {
				shapes[f.name] = sh
				continue
			}
			if first == sh {
				continue
			}
			alias := f.name + "_" + m.on
			for taken[alias] {
				alias += "_"
			}
			taken[alias] = true
			f.alias = alias
		}
	}
}

// shape is what GraphQL compares for fields under one response key: the
// list and non-null wrappers of the type around, for a leaf, its name,
// and for an object, the shapes of its selections by response key. Two
// objects whose selections differ are counted as different shapes even
// where GraphQL would merge them: an alias too many is harmless.
func shape(p *picked) string {
	var inner string
	if p.on != "" || len(p.sub) > 0 {
		parts := make([]string, 0, len(p.sub))
		for _, c := range p.sub {
			key := c.name
			if c.alias != "" {
				key = c.alias
			}
			if c.on != "" {
				key = "... on " + c.on
			}
			parts = append(parts, key+":"+shape(c))
		}
		sort.Strings(parts)
		inner = "{" + strings.Join(parts, " ") + "}"
	}
	if p.typ == nil {
		return inner
	}
	return wrap(p.typ, inner)
}

// wrap is t as written, with inner in place of the named type when given.
func wrap(t *ast.Type, inner string) string {
	var out string
	if t.Elem != nil {
		out = "[" + wrap(t.Elem, inner) + "]"
	} else if inner != "" {
		out = inner
	} else {
		out = t.NamedType
	}
	if t.NonNull {
		out += "!"
	}
	return out
}

// restore gives the fields that disambiguate aliased their own names
// back in an answer v to the selections sel: in an object of a union
// member (told by its __typename, which a union's selections hold), the
// member's aliased field is moved to its name. Only one member applies
// to an object, so the name is free.
func restore(v any, sel []*picked) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			restore(e, sel)
		}
	case map[string]any:
		for _, p := range sel {
			if p.on != "" {
				if v["__typename"] == p.on {
					restore(v, p.sub)
				}
				continue
			}
			key := p.name
			if p.alias != "" {
				key = p.alias
			}
			val, ok := v[key]
			if !ok {
				continue
			}
			if p.alias != "" {
				delete(v, p.alias)
				v[p.name] = val
			}
			if len(p.sub) > 0 {
				restore(val, p.sub)
			}
		}
	}
}

// aliased reports whether a selection has an alias to restore.
func aliased(sel []*picked) bool {
	for _, p := range sel {
		if p.alias != "" || aliased(p.sub) {
			return true
		}
	}
	return false
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
