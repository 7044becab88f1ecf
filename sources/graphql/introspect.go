package graphql

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// introspectionQuery asks for what tools and validation need. It leaves
// out fields newer than the June 2018 specification (isRepeatable,
// specifiedByURL, inputFields(includeDeprecated)) so older servers answer.
const introspectionQuery = `query EdgemcpIntrospection {
  __schema {
    queryType { name }
    mutationType { name }
    subscriptionType { name }
    types { ...FullType }
    directives { name description locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) {
    name description
    args { ...InputValue }
    type { ...TypeRef }
    isDeprecated deprecationReason
  }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name
    ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } }
}`

// introspection is the answer to introspectionQuery.
type introspection struct {
	Schema struct {
		QueryType        *namedRef  `json:"queryType"`
		MutationType     *namedRef  `json:"mutationType"`
		SubscriptionType *namedRef  `json:"subscriptionType"`
		Types            []fullType `json:"types"`
		Directives       []struct {
			Name        string       `json:"name"`
			Description *string      `json:"description"`
			Locations   []string     `json:"locations"`
			Args        []inputValue `json:"args"`
		} `json:"directives"`
	} `json:"__schema"`
}

type namedRef struct {
	Name string `json:"name"`
}

type typeRef struct {
	Kind   string   `json:"kind"`
	Name   *string  `json:"name"`
	OfType *typeRef `json:"ofType"`
}

type inputValue struct {
	Name         string  `json:"name"`
	Description  *string `json:"description"`
	Type         typeRef `json:"type"`
	DefaultValue *string `json:"defaultValue"`
}

type fullType struct {
	Kind        string  `json:"kind"`
	Name        string  `json:"name"`
	Description *string `json:"description"`
	Fields      []struct {
		Name              string       `json:"name"`
		Description       *string      `json:"description"`
		Args              []inputValue `json:"args"`
		Type              typeRef      `json:"type"`
		IsDeprecated      bool         `json:"isDeprecated"`
		DeprecationReason *string      `json:"deprecationReason"`
	} `json:"fields"`
	InputFields []inputValue `json:"inputFields"`
	Interfaces  []typeRef    `json:"interfaces"`
	EnumValues  []struct {
		Name              string  `json:"name"`
		Description       *string `json:"description"`
		IsDeprecated      bool    `json:"isDeprecated"`
		DeprecationReason *string `json:"deprecationReason"`
	} `json:"enumValues"`
	PossibleTypes []typeRef `json:"possibleTypes"`
}

// builtins are defined by gqlparser's prelude, which every schema is
// loaded with.
var builtins = map[string]bool{
	"String": true, "Int": true, "Float": true, "Boolean": true, "ID": true,
	"skip": true, "include": true, "deprecated": true, "specifiedBy": true, "oneOf": true, "defer": true,
}

// sdlFromIntrospection writes the schema an introspection answer
// describes as SDL, for gqlparser to parse and validate like a file.
// Every name is checked to be a GraphQL name and every description is
// written as a quoted string, so the answer cannot inject definitions.
func sdlFromIntrospection(raw []byte) (string, error) {
	var in introspection
	if err := json.Unmarshal(raw, &in); err != nil {
		return "", fmt.Errorf("introspection answer: %v", err)
	}
	s := in.Schema
	if s.QueryType == nil || s.QueryType.Name == "" {
		return "", fmt.Errorf("introspection answer: no schema (is introspection disabled? use `schema <file>`)")
	}
	w := &sdlWriter{}
	w.str("schema {\n  query: ").name(s.QueryType.Name)
	if s.MutationType != nil {
		w.str("\n  mutation: ").name(s.MutationType.Name)
	}
	if s.SubscriptionType != nil {
		w.str("\n  subscription: ").name(s.SubscriptionType.Name)
	}
	w.str("\n}\n")
	for _, d := range s.Directives {
		if builtins[d.Name] {
			continue
		}
		w.desc("", d.Description).str("directive @").name(d.Name).args(d.Args).str(" on ")
		for i, loc := range d.Locations {
			if i > 0 {
				w.str(" | ")
			}
			w.name(loc)
		}
		w.str("\n")
	}
	types := append([]fullType(nil), s.Types...)
	sort.SliceStable(types, func(i, j int) bool { return types[i].Name < types[j].Name })
	for _, t := range types {
		if builtins[t.Name] || strings.HasPrefix(t.Name, "__") {
			continue
		}
		w.desc("", t.Description)
		switch t.Kind {
		case "SCALAR":
			w.str("scalar ").name(t.Name)
		case "OBJECT", "INTERFACE":
			if t.Kind == "OBJECT" {
				w.str("type ")
			} else {
				w.str("interface ")
			}
			w.name(t.Name)
			for i, it := range t.Interfaces {
				if i == 0 {
					w.str(" implements ")
				} else {
					w.str(" & ")
				}
				w.ref(it)
			}
			w.str(" {\n")
			for _, f := range t.Fields {
				w.desc("  ", f.Description).str("  ").name(f.Name).args(f.Args).str(": ").ref(f.Type)
				w.deprecated(f.IsDeprecated, f.DeprecationReason).str("\n")
			}
			w.str("}")
		case "UNION":
			w.str("union ").name(t.Name).str(" =")
			for i, pt := range t.PossibleTypes {
				if i > 0 {
					w.str(" |")
				}
				w.str(" ").ref(pt)
			}
		case "ENUM":
			w.str("enum ").name(t.Name).str(" {\n")
			for _, v := range t.EnumValues {
				w.desc("  ", v.Description).str("  ").name(v.Name).deprecated(v.IsDeprecated, v.DeprecationReason).str("\n")
			}
			w.str("}")
		case "INPUT_OBJECT":
			w.str("input ").name(t.Name).str(" {\n")
			for _, f := range t.InputFields {
				w.str("  ").inputValue(f).str("\n")
			}
			w.str("}")
		default:
			return "", fmt.Errorf("introspection answer: type %q has kind %q", t.Name, t.Kind)
		}
		w.str("\n")
	}
	if w.err != nil {
		return "", fmt.Errorf("introspection answer: %v", w.err)
	}
	return w.b.String(), nil
}

// sdlWriter writes SDL, keeping the first error.
type sdlWriter struct {
	b   strings.Builder
	err error
}

func (w *sdlWriter) str(s string) *sdlWriter { w.b.WriteString(s); return w }

func (w *sdlWriter) name(n string) *sdlWriter {
	if !isName(n) && w.err == nil {
		w.err = fmt.Errorf("%q is not a GraphQL name", n)
	}
	return w.str(n)
}

func (w *sdlWriter) desc(indent string, d *string) *sdlWriter {
	if d == nil || *d == "" {
		return w
	}
	return w.str(indent).str(quote(*d)).str("\n")
}

func (w *sdlWriter) args(args []inputValue) *sdlWriter {
	if len(args) == 0 {
		return w
	}
	w.str("(")
	for i, a := range args {
		if i > 0 {
			w.str(", ")
		}
		w.inputValue(a)
	}
	return w.str(")")
}

func (w *sdlWriter) inputValue(v inputValue) *sdlWriter {
	if v.Description != nil && *v.Description != "" {
		w.str(quote(*v.Description)).str(" ")
	}
	w.name(v.Name).str(": ").ref(v.Type)
	if v.DefaultValue != nil {
		// A GraphQL literal as the server wrote it, checked to be one
		// value alone so that it cannot end the definition early.
		if err := checkLiteral(*v.DefaultValue); err != nil && w.err == nil {
			w.err = fmt.Errorf("default value of %s: %v", v.Name, err)
		}
		w.str(" = ").str(*v.DefaultValue)
	}
	return w
}

func (w *sdlWriter) deprecated(is bool, reason *string) *sdlWriter {
	if !is {
		return w
	}
	if reason == nil {
		return w.str(" @deprecated")
	}
	return w.str(" @deprecated(reason: ").str(quote(*reason)).str(")")
}

// ref writes a type reference: Name, [T] or T!.
func (w *sdlWriter) ref(t typeRef) *sdlWriter {
	switch t.Kind {
	case "NON_NULL", "LIST":
		if t.OfType == nil {
			if w.err == nil {
				w.err = fmt.Errorf("a %s type without ofType (the answer is nested too deep)", t.Kind)
			}
			return w
		}
		if t.Kind == "LIST" {
			return w.str("[").ref(*t.OfType).str("]")
		}
		return w.ref(*t.OfType).str("!")
	}
	if t.Name == nil {
		if w.err == nil {
			w.err = fmt.Errorf("a %s type without a name", t.Kind)
		}
		return w
	}
	return w.name(*t.Name)
}

// checkLiteral reports whether lit is a single GraphQL value literal: in
// a one-field input type, it must leave exactly that type and that field.
func checkLiteral(lit string) error {
	doc, err := parser.ParseSchema(&ast.Source{Input: "input X { f: Int = " + lit + " }"})
	if err != nil || len(doc.Definitions) != 1 || len(doc.Extensions) != 0 || len(doc.Directives) != 0 ||
		len(doc.Schema) != 0 || len(doc.SchemaExtension) != 0 || len(doc.DirectiveExtensions) != 0 ||
		len(doc.Definitions[0].Fields) != 1 || doc.Definitions[0].Fields[0].DefaultValue == nil {
		return fmt.Errorf("%q is not one value", lit)
	}
	return nil
}

// quote is a GraphQL string: JSON's escapes are a subset of GraphQL's.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// isName reports whether s matches /[_A-Za-z][_0-9A-Za-z]*/.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return true
}
