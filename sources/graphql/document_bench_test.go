package graphql

import (
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/edgemcp/edgemcp/pipeline"
)

// BenchmarkDocument is the gateway's own cost of a call before it is sent:
// building the operation, validating it against the schema and the limits,
// and checking the variables; with a `set` argument (tenant) bound on the
// way, and for the raw tool's document.
func BenchmarkDocument(b *testing.B) {
	s := librarySchema(b)
	limits := Limits{}.withDefaults()
	set, err := NewFixed(map[string]string{"tenant": "{{ auth.subject }}"})
	if err != nil {
		b.Fatal(err)
	}
	books, customer := s.Query.Fields.ForName("books"), s.Query.Fields.ForName("customer")
	field := func(f *ast.FieldDefinition) *rootField {
		return &rootField{kind: "query", field: f, selection: Selection(s, f.Type, 2, limits), selectArg: "select"}
	}
	id := &pipeline.Identity{Subject: "acme"}
	const raw = `query Q($id: ID!) { customer(id: $id) { name orders { id item } } books(first: 2) { totalCount } }`
	for _, bc := range []struct {
		name   string
		rf     *rootField // nil: the raw tool
		fixed  Fixed
		inputs map[string]any
	}{
		{"generated", field(books), Fixed{}, map[string]any{"first": 2, "filter": map[string]any{"genre": "FICTION"}}},
		{"select", field(books), Fixed{}, map[string]any{"first": 2, "select": "{ totalCount edges { node { title author { name } } } }"}},
		{"generated-set", field(customer), set, map[string]any{"id": "c1"}},
		{"raw", nil, Fixed{}, map[string]any{"query": raw, "variables": map[string]any{"id": "c1"}}},
		{"raw-set", nil, set, map[string]any{"query": raw, "variables": map[string]any{"id": "c1"}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			call := &pipeline.Call{Inputs: bc.inputs, Identity: id}
			for b.Loop() {
				var err error
				if bc.rf != nil {
					_, err = bc.rf.document(s, limits, bc.fixed, call)
				} else {
					_, err = rawCall(s, limits, false, bc.fixed, call)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
