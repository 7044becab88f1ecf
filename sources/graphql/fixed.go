package graphql

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// Fixed holds the source's `set` lines on every document it sends, the
// caller's own (the raw tool, a `select`) as much as the generated ones: a
// field that takes a set argument gets the set value, bound as a
// variable, wherever it is in the operation (nested, aliased, in a
// fragment or an inline fragment). A document that gives such an argument
// a value of its own is refused rather than rewritten: the caller learns
// that the value is not theirs to choose, as a field tool's caller does
// from "unknown input". A field that leaves the argument out gets it too,
// since leaving it out often means "all of them" upstream.
type Fixed struct {
	args  upstream.FixedArgs
	names []string // sorted: the first refusal is the same every time
}

// NewFixed reads a source's `set` lines.
func NewFixed(set map[string]string) (Fixed, error) {
	args, err := upstream.ParseFixedArgs(set)
	if err != nil {
		return Fixed{}, err
	}
	names := make([]string, 0, len(args))
	for name := range args {
		names = append(names, name)
	}
	sort.Strings(names)
	return Fixed{args: args, names: names}, nil
}

// has reports whether name is a set argument.
func (f Fixed) has(name string) bool {
	_, ok := f.args[name]
	return ok
}

// fromIdentity names the caller's values the set lines take, for
// pipeline.Tool.FromIdentity; only those whose argument some field of s
// takes (s nil: a schema still to come, which may have any).
func (f Fixed) fromIdentity(s *ast.Schema) []string {
	var out []string
	for _, name := range f.names {
		if id := f.args[name].Identity(); id != "" && (s == nil || takenBySome(s, name)) {
			out = append(out, fmt.Sprintf("argument %s: {{ %s }}", name, id))
		}
	}
	return out
}

// takenBySome reports whether a field of s takes an argument name.
func takenBySome(s *ast.Schema, name string) bool {
	for _, def := range s.Types {
		if def.Kind != ast.Object && def.Kind != ast.Interface {
			continue
		}
		for _, fd := range def.Fields {
			if fd.Arguments.ForName(name) != nil {
				return true
			}
		}
	}
	return false
}

// validate validates a document whose set arguments are still to be bound:
// by every rule but ProvidedRequiredArguments, which the validation of
// what is sent applies (a field that needs a set argument leaves it out).
func (f Fixed) validate(s *ast.Schema, doc *ast.QueryDocument) gqlerror.List {
	if len(f.names) == 0 {
		return validator.Validate(s, doc)
	}
	return validator.ValidateWithRules(s, doc, beforeBinding)
}

var beforeBinding = func() *rules.Rules {
	r := rules.NewDefaultRules()
	r.RemoveRule(rules.ProvidedRequiredArgumentsRule.Name)
	return r
}()

// bind holds the set arguments on doc, the one operation op that is sent
// with the fragments it spreads, which has passed validation (so that its
// fields know their definitions): a field that takes a set argument and
// gives it a value is refused; every other one gets the argument as a
// variable that op declares, one per argument type, whose value (the
// call's set value) goes into vars. It reports whether doc changed.
func (f Fixed) bind(s *ast.Schema, doc *ast.QueryDocument, op *ast.OperationDefinition, call *pipeline.Call, vars map[string]any) (bool, error) {
	if len(f.names) == 0 {
		return false, nil
	}
	b := &binder{f: f, s: s, op: op, call: call, vars: vars, byType: map[string]string{}, values: map[string]any{}}
	for _, o := range doc.Operations {
		if err := b.walk(o.SelectionSet); err != nil {
			return false, err
		}
	}
	for _, frag := range doc.Fragments {
		if err := b.walk(frag.SelectionSet); err != nil {
			return false, err
		}
	}
	return b.changed, nil
}

type binder struct {
	f       Fixed
	s       *ast.Schema
	op      *ast.OperationDefinition
	call    *pipeline.Call
	vars    map[string]any
	byType  map[string]string // set name + "\x00" + argument type → the variable
	values  map[string]any    // set name → the call's value, looked up once
	changed bool
}

func (b *binder) walk(set ast.SelectionSet) error {
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			if err := b.field(sel); err != nil {
				return err
			}
			if err := b.walk(sel.SelectionSet); err != nil {
				return err
			}
		case *ast.InlineFragment:
			if err := b.walk(sel.SelectionSet); err != nil {
				return err
			}
		}
		// A fragment spread's fields are walked with its definition.
	}
	return nil
}

func (b *binder) field(fl *ast.Field) error {
	parent := fl.ObjectDefinition
	if strings.HasPrefix(fl.Name, "__") || parent != nil && strings.HasPrefix(parent.Name, "__") {
		return nil // introspection: the schema, not the operator's data
	}
	if fl.Definition == nil || parent == nil {
		return fmt.Errorf("field %s: not validated", fl.Name) // a bug: validation sets both
	}
	for _, name := range b.f.names {
		arg := fl.Definition.Arguments.ForName(name)
		if arg == nil {
			if err := b.throughInterface(fl, parent, name); err != nil {
				return err
			}
			continue
		}
		if fl.Arguments.ForName(name) != nil {
			return fmt.Errorf("argument %q of field %s.%s is set by the gateway: leave it out", name, parent.Name, fl.Name)
		}
		v, err := b.variable(name, arg.Type)
		if err != nil {
			return err
		}
		fl.Arguments = append(fl.Arguments, &ast.Argument{Name: name, Value: &ast.Value{Kind: ast.Variable, Raw: v}})
		b.changed = true
	}
	return nil
}

// throughInterface refuses a field selected on an interface that does not
// take the argument while a type implementing it does (its extra
// arguments must be optional): upstream that type's field would run
// without the set value.
func (b *binder) throughInterface(fl *ast.Field, parent *ast.Definition, name string) error {
	if parent.Kind != ast.Interface {
		return nil
	}
	for _, t := range b.s.GetPossibleTypes(parent) {
		if fd := t.Fields.ForName(fl.Name); fd != nil && fd.Arguments.ForName(name) != nil {
			return fmt.Errorf("field %s.%s runs as %s.%s, whose argument %q is set by the gateway: select it on %s (... on %s { %s })",
				parent.Name, fl.Name, t.Name, fl.Name, name, t.Name, t.Name, fl.Name)
		}
	}
	return nil
}

// variable is the variable holding set argument name for a location of
// type t, declared by the operation on first use.
func (b *binder) variable(name string, t *ast.Type) (string, error) {
	key := name + "\x00" + t.String()
	if v, ok := b.byType[key]; ok {
		return v, nil
	}
	value, ok := b.values[name]
	if !ok {
		var err error
		if value, err = b.f.args[name].Value(b.call); err != nil {
			return "", err
		}
		b.values[name] = value
	}
	// $name, else the first of $name_2, $name_3... the operation does not
	// declare (the caller's own, or one for another type).
	v := name
	for i := 2; b.op.VariableDefinitions.ForName(v) != nil; i++ {
		v = fmt.Sprintf("%s_%d", name, i)
	}
	b.byType[key] = v
	b.op.VariableDefinitions = append(b.op.VariableDefinitions, &ast.VariableDefinition{Variable: v, Type: copyType(t)})
	if s, literal := value.(string); literal && b.f.args[name].Identity() == "" {
		value = literalFor(s, t)
	}
	b.vars[v] = value
	return v, nil
}

// literalFor is a `set` literal as the JSON value of its argument's type:
// a number for Int and Float, true or false for Boolean, else the text.
func literalFor(text string, t *ast.Type) any {
	switch t.Name() {
	case "Int", "Float":
		var n json.Number
		if json.Unmarshal([]byte(text), &n) == nil {
			return n
		}
	case "Boolean":
		if text == "true" || text == "false" {
			return text == "true"
		}
	}
	return text
}

func copyType(t *ast.Type) *ast.Type {
	if t == nil {
		return nil
	}
	return &ast.Type{NamedType: t.NamedType, Elem: copyType(t.Elem), NonNull: t.NonNull}
}
