package graphql

import (
	"fmt"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// keepFirst removes from a parsed SDL file the fields (of objects,
// interfaces and input objects) and enum values that a type, with its
// extensions, defines again exactly alike: GitHub's published
// schema.graphql repeats some, and GitHub's own tooling reads it. It
// returns one warning per repeat. A repeat that differs (another type,
// other arguments or defaults) is an error: which one the endpoint serves
// cannot be told.
func keepFirst(sd *ast.SchemaDocument) ([]string, error) {
	fields := map[string]map[string]*ast.FieldDefinition{}
	values := map[string]map[string]*ast.EnumValueDefinition{}
	var warnings []string
	pass := func(def *ast.Definition) error {
		if fields[def.Name] == nil {
			fields[def.Name], values[def.Name] = map[string]*ast.FieldDefinition{}, map[string]*ast.EnumValueDefinition{}
		}
		seen := fields[def.Name]
		kept := def.Fields[:0]
		for _, f := range def.Fields {
			first := seen[f.Name]
			if first == nil {
				seen[f.Name] = f
				kept = append(kept, f)
				continue
			}
			if signature(first) != signature(f) {
				return fmt.Errorf("%s: field %s.%s is defined twice, differently (%s and %s)", at(f.Position), def.Name, f.Name, signature(first), signature(f))
			}
			warnings = append(warnings, fmt.Sprintf("%s: field %s.%s is defined again, alike: the repeat is ignored", at(f.Position), def.Name, f.Name))
		}
		def.Fields = kept
		enum := values[def.Name]
		keptValues := def.EnumValues[:0]
		for _, v := range def.EnumValues {
			if enum[v.Name] != nil {
				warnings = append(warnings, fmt.Sprintf("%s: enum value %s.%s is defined again: the repeat is ignored", at(v.Position), def.Name, v.Name))
				continue
			}
			enum[v.Name] = v
			keptValues = append(keptValues, v)
		}
		def.EnumValues = keptValues
		return nil
	}
	for _, list := range []ast.DefinitionList{sd.Definitions, sd.Extensions} {
		for _, def := range list {
			if err := pass(def); err != nil {
				return nil, err
			}
		}
	}
	return warnings, nil
}

// signature is what a field's definition says about calling it: its
// type, and its arguments with their types and defaults.
func signature(f *ast.FieldDefinition) string {
	var b strings.Builder
	b.WriteString(f.Type.String())
	for _, a := range f.Arguments {
		b.WriteString(" " + a.Name + ": " + a.Type.String())
		if a.DefaultValue != nil {
			b.WriteString(" = " + a.DefaultValue.String())
		}
	}
	return b.String()
}

func at(p *ast.Position) string {
	if p == nil || p.Src == nil {
		return "?"
	}
	return fmt.Sprintf("%s:%d", p.Src.Name, p.Line)
}
