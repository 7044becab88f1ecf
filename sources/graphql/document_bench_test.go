package graphql

import (
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
)

// BenchmarkDocument is the gateway's own cost of a call before it is sent:
// building the operation, validating it against the schema and the limits,
// and checking the variables.
func BenchmarkDocument(b *testing.B) {
	s := librarySchema(b)
	limits := Limits{}.withDefaults()
	f := s.Query.Fields.ForName("books")
	rf := &rootField{kind: "query", field: f, selection: Selection(s, f.Type, 2, limits), selectArg: "select"}
	for _, bc := range []struct {
		name   string
		inputs map[string]any
	}{
		{"generated", map[string]any{"first": 2, "filter": map[string]any{"genre": "FICTION"}}},
		{"select", map[string]any{"first": 2, "select": "{ totalCount edges { node { title author { name } } } }"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := rf.document(s, limits, Fixed{}, &pipeline.Call{Inputs: bc.inputs}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
