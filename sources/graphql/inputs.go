package graphql

import (
	"github.com/vektah/gqlparser/v2/ast"
)

// maxInputDepth bounds how deep input objects are described; deeper
// values are still validated against the schema before a call is sent.
const maxInputDepth = 6

// inputSchema is the JSON Schema of a field's arguments but the fixed
// ones, plus the optional selection override named sel.
func inputSchema(s *ast.Schema, f *ast.FieldDefinition, sel string, fixed Fixed) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, a := range f.Arguments {
		if fixed.has(a.Name) {
			continue
		}
		p := typeSchema(s, a.Type, 0, map[string]bool{})
		describe(p, a.Description, a.DefaultValue)
		props[a.Name] = p
		if a.Type.NonNull && a.DefaultValue == nil {
			required = append(required, a.Name)
		}
	}
	if sel != "" {
		props[sel] = map[string]any{
			"type": "string",
			"description": "Optional selection set replacing the generated one, e.g. \"{ id name }\"; " +
				"validated against the schema before the call is sent.",
		}
	}
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

func describe(p map[string]any, desc string, def *ast.Value) {
	if desc != "" {
		p["description"] = desc
	}
	if def != nil {
		if v, err := def.Value(nil); err == nil {
			p["default"] = v
		}
	}
}

// typeSchema is the JSON Schema of an input type: scalars by their JSON
// form (ID as a string, custom scalars as any value), enums as string
// enums, lists as arrays and input objects as objects to maxInputDepth,
// a type already on the path left open (the cycle is cut).
func typeSchema(s *ast.Schema, t *ast.Type, depth int, path map[string]bool) map[string]any {
	if t.Elem != nil {
		return map[string]any{"type": "array", "items": typeSchema(s, t.Elem, depth, path)}
	}
	switch t.NamedType {
	case "Int":
		return map[string]any{"type": "integer", "minimum": -2147483648, "maximum": 2147483647}
	case "Float":
		return map[string]any{"type": "number"}
	case "String":
		return map[string]any{"type": "string"}
	case "ID":
		return map[string]any{"type": "string"}
	case "Boolean":
		return map[string]any{"type": "boolean"}
	}
	def := s.Types[t.NamedType]
	if def == nil {
		return map[string]any{}
	}
	switch def.Kind {
	case ast.Enum:
		vals := make([]any, 0, len(def.EnumValues))
		for _, v := range def.EnumValues {
			vals = append(vals, v.Name)
		}
		out := map[string]any{"type": "string", "enum": vals}
		if def.Description != "" {
			out["description"] = def.Description
		}
		return out
	case ast.InputObject:
		if depth >= maxInputDepth || path[def.Name] {
			return map[string]any{"type": "object", "description": "A " + def.Name + " (described no deeper)."}
		}
		path[def.Name] = true
		defer delete(path, def.Name)
		props := map[string]any{}
		required := []string{}
		for _, f := range def.Fields {
			p := typeSchema(s, f.Type, depth+1, path)
			describe(p, f.Description, f.DefaultValue)
			props[f.Name] = p
			if f.Type.NonNull && f.DefaultValue == nil {
				required = append(required, f.Name)
			}
		}
		out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			out["required"] = required
		}
		if def.Description != "" {
			out["description"] = def.Description
		}
		return out
	default: // a custom scalar: any JSON value the server accepts
		out := map[string]any{}
		desc := "A " + def.Name + " (custom scalar)."
		if def.Description != "" {
			desc = def.Description
		}
		out["description"] = desc
		return out
	}
}
