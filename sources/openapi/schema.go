package openapi

import (
	"github.com/getkin/kin-openapi/openapi3"
)

// maxSchemaDepth bounds how deep a published schema goes: beyond it (and
// wherever a schema contains itself) the schema is cut to one that accepts
// any value, so a recursive or very deep document cannot blow up tools/list.
const maxSchemaDepth = 16

// maxSchemaNodes bounds how many schema objects one published schema
// holds. $refs are resolved inline, and a document whose schemas refer to
// each other without cycles still multiplies: one of DocuSign's request
// bodies became 94 MB. Past the bound, schemas are cut as past the depth.
const maxSchemaNodes = 1000

// schemaUse says which side of the exchange a schema describes: readOnly
// properties are only ever sent by the server, writeOnly ones only by the
// client, so each side leaves the other's out.
type schemaUse int

const (
	forRequest schemaUse = iota
	forResponse
)

// jsonSchema converts an OpenAPI schema (3.0 or 3.1) to a JSON Schema
// (draft 2020-12) object for tools/list, with every $ref resolved inline.
// Patterns are written as clients compile them (ecmaPattern); one that has
// no such form is left out and added to dropped.
func jsonSchema(ref *openapi3.SchemaRef, use schemaUse, dropped *[]string) map[string]any {
	c := schemaConverter{use: use, onPath: map[*openapi3.Schema]bool{}, dropped: dropped, budget: maxSchemaNodes}
	return c.convert(ref, 0)
}

type schemaConverter struct {
	use     schemaUse
	onPath  map[*openapi3.Schema]bool // the schemas being converted, outermost first
	dropped *[]string                 // patterns left out
	budget  int                       // schema objects still to convert (maxSchemaNodes)
}

func (c *schemaConverter) convert(ref *openapi3.SchemaRef, depth int) map[string]any {
	if ref == nil || ref.Value == nil {
		return map[string]any{}
	}
	s := ref.Value
	if c.onPath[s] || depth >= maxSchemaDepth || c.budget <= 0 {
		out := map[string]any{}
		if s.Description != "" {
			out["description"] = s.Description
		}
		out["$comment"] = "cut: the schema contains itself, nests too deep or is too large; any value is accepted here and checked upstream"
		return out
	}
	c.budget--
	c.onPath[s] = true
	defer delete(c.onPath, s)

	out := map[string]any{}
	if s.Always != nil { // a boolean schema: true accepts anything, false nothing
		if !*s.Always {
			out["not"] = map[string]any{}
		}
		return out
	}
	types := s.Type.Slice()
	if s.Nullable && len(types) > 0 && !s.Type.Includes("null") { // 3.0's nullable is 3.1's "null" type
		types = append(append([]string(nil), types...), "null")
	}
	switch len(types) {
	case 0:
	case 1:
		out["type"] = types[0]
	default:
		out["type"] = types
	}
	set := func(k string, v any, ok bool) {
		if ok {
			out[k] = v
		}
	}
	set("title", s.Title, s.Title != "")
	set("description", s.Description, s.Description != "")
	set("format", s.Format, s.Format != "")
	set("enum", s.Enum, len(s.Enum) > 0)
	set("default", s.Default, s.Default != nil)
	set("const", s.Const, s.Const != nil)
	set("deprecated", true, s.Deprecated)
	setPtr(out, "minimum", s.Min)
	setPtr(out, "maximum", s.Max)
	setPtr(out, "multipleOf", s.MultipleOf)
	// 3.0 writes exclusive bounds as booleans on minimum/maximum, 3.1 as numbers.
	if b := s.ExclusiveMin; b.Value != nil {
		out["exclusiveMinimum"] = *b.Value
	} else if b.Bool != nil && *b.Bool && s.Min != nil {
		delete(out, "minimum")
		out["exclusiveMinimum"] = *s.Min
	}
	if b := s.ExclusiveMax; b.Value != nil {
		out["exclusiveMaximum"] = *b.Value
	} else if b.Bool != nil && *b.Bool && s.Max != nil {
		delete(out, "maximum")
		out["exclusiveMaximum"] = *s.Max
	}
	set("minLength", s.MinLength, s.MinLength > 0)
	setPtr(out, "maxLength", s.MaxLength)
	if s.Pattern != "" {
		if p, ok := ecmaPattern(s.Pattern); ok {
			out["pattern"] = p
		} else if c.dropped != nil {
			*c.dropped = append(*c.dropped, s.Pattern)
		}
	}
	set("minItems", s.MinItems, s.MinItems > 0)
	setPtr(out, "maxItems", s.MaxItems)
	set("uniqueItems", true, s.UniqueItems)
	set("minProperties", s.MinProps, s.MinProps > 0)
	setPtr(out, "maxProperties", s.MaxProps)

	if s.Items != nil {
		out["items"] = c.convert(s.Items, depth+1)
	}
	if len(s.PrefixItems) > 0 {
		out["prefixItems"] = c.list(s.PrefixItems, depth)
	}
	if len(s.Properties) > 0 {
		props := map[string]any{}
		var required []string
		for name, p := range s.Properties {
			if p != nil && p.Value != nil && c.skips(p.Value) {
				continue
			}
			props[name] = c.convert(p, depth+1)
		}
		for _, r := range s.Required {
			if _, ok := props[r]; ok {
				required = append(required, r)
			}
		}
		out["properties"] = props
		if len(required) > 0 {
			out["required"] = required
		}
	} else if len(s.Required) > 0 {
		out["required"] = s.Required
	}
	if ap := s.AdditionalProperties; ap.Has != nil {
		out["additionalProperties"] = *ap.Has
	} else if ap.Schema != nil {
		out["additionalProperties"] = c.convert(ap.Schema, depth+1)
	}
	if len(s.OneOf) > 0 {
		out["oneOf"] = c.list(s.OneOf, depth)
	}
	if len(s.AnyOf) > 0 {
		out["anyOf"] = c.list(s.AnyOf, depth)
	}
	if len(s.AllOf) > 0 {
		out["allOf"] = c.list(s.AllOf, depth)
	}
	if s.Not != nil {
		out["not"] = c.convert(s.Not, depth+1)
	}
	return out
}

func (c *schemaConverter) list(refs openapi3.SchemaRefs, depth int) []any {
	out := make([]any, 0, len(refs))
	for _, r := range refs {
		out = append(out, c.convert(r, depth+1))
	}
	return out
}

// skips reports whether a property belongs only to the other side.
func (c *schemaConverter) skips(s *openapi3.Schema) bool {
	if c.use == forRequest {
		return s.ReadOnly
	}
	return s.WriteOnly
}

// setPtr sets out[k] to *p when p is set.
func setPtr[T any](out map[string]any, k string, p *T) {
	if p != nil {
		out[k] = *p
	}
}
