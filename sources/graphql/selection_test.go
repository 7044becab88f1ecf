package graphql

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/edgemcp/edgemcp/internal/testservices/graphqllib"
	"github.com/edgemcp/edgemcp/pipeline"
)

func librarySchema(t testing.TB) *ast.Schema {
	t.Helper()
	s, err := gqlparser.LoadSchema(&ast.Source{Name: "library.graphql", Input: graphqllib.SDL})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSelection: scalar and enum fields to the depth, the Author ↔ Book
// cycle cut, a connection's edges { node } as one level, unions by
// member, and the field and depth limits kept.
func TestSelection(t *testing.T) {
	s := librarySchema(t)
	const book = "{ id title genre year rating secret author { id name } }"
	for _, tc := range []struct {
		field  string
		depth  int
		limits Limits
		want   string
	}{
		{"book", 2, Limits{}, book},
		// Depth 3 would reach author { books }: Book is on the path, cut.
		{"book", 3, Limits{}, book},
		{"book", 1, Limits{}, "{ id title genre year rating secret }"},
		{"books", 2, Limits{}, "{ totalCount edges { cursor node { id title genre year rating secret } } pageInfo { hasNextPage } }"},
		{"books", 1, Limits{}, "{ totalCount edges { cursor } }"},
		{"find", 2, Limits{}, "{ __typename ... on Book { id title genre year rating secret author { id name } } ... on Author { id name books { id title genre year rating secret } } }"},
		{"count", 2, Limits{}, ""},
		// The root field and three more.
		{"book", 2, Limits{MaxFields: 4}, "{ id title genre }"},
		// Nested at most 2 deep with the root field: no objects below.
		{"books", 5, Limits{MaxDepth: 2}, "{ totalCount }"},
		{"books", 5, Limits{MaxDepth: 3}, "{ totalCount edges { cursor } pageInfo { hasNextPage } }"},
	} {
		f := s.Query.Fields.ForName(tc.field)
		if got := Selection(s, f.Type, tc.depth, tc.limits); got != tc.want {
			t.Errorf("%s depth %d %+v:\n got %s\nwant %s", tc.field, tc.depth, tc.limits, got, tc.want)
		}
	}
	// An object whose every field needs an argument or is out of depth.
	s2, err := gqlparser.LoadSchema(&ast.Source{Input: "type Query { a: A } type A { b(x: Int!): Int, c: C } type C { d: Int }"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Selection(s2, s2.Query.Fields.ForName("a").Type, 1, Limits{}); got != "{ __typename }" {
		t.Errorf("nothing selectable: %s", got)
	}
}

// FuzzSelection: for any schema gqlparser accepts, the selection generated
// for every root field without required arguments makes a document that
// passes validation and stays within the limits.
func FuzzSelection(f *testing.F) {
	f.Add(graphqllib.SDL, uint8(2), uint8(10), uint8(200))
	f.Add("type Query { a: A } type A { a: A, b: [B] } union B = A | C type C { c: Int, a: A }", uint8(4), uint8(3), uint8(5))
	f.Add("interface N { id: ID! } type Query { n: N, e: E } type T implements N { id: ID!, n: N } enum E { X }", uint8(3), uint8(4), uint8(3))
	f.Add("type Query { c: Conn } type Conn { edges: [Edge] } type Edge { node: Conn, cursor: String }", uint8(9), uint8(10), uint8(50))
	f.Fuzz(func(t *testing.T, sdl string, depth, maxDepth, maxFields uint8) {
		s, err := gqlparser.LoadSchema(&ast.Source{Input: sdl})
		if err != nil || s.Query == nil {
			return
		}
		// max_depth and max_fields are at least 2 (module.go checkLimits).
		limits := Limits{MaxDepth: int(maxDepth%12) + 2, MaxFields: int(maxFields) + 2}
		for _, fd := range s.Query.Fields {
			if !selectable(fd) || len(fd.Name) > 1 && fd.Name[:2] == "__" {
				continue
			}
			rf := &rootField{kind: ast.Query, field: fd, selection: Selection(s, fd.Type, int(depth%8)+1, limits)}
			if _, err := rf.document(s, limits, Fixed{}, &pipeline.Call{Inputs: map[string]any{}}); err != nil {
				t.Fatalf("field %s, selection %q: %v", fd.Name, rf.selection, err)
			}
		}
	})
}

// TestSelectionWideSchema: objects that lead to no leaf are explored a
// bounded number of times, however wide and deep the schema.
func TestSelectionWideSchema(t *testing.T) {
	var b strings.Builder
	b.WriteString("type Query { t0: T0 }\n")
	for i := range 12 {
		fmt.Fprintf(&b, "type T%d {", i)
		for j := range 12 {
			fmt.Fprintf(&b, " f%d: T%d", j, i+1)
		}
		b.WriteString(" }\n")
	}
	b.WriteString("type T12 { x(a: Int!): Int }\n")
	s, err := gqlparser.LoadSchema(&ast.Source{Input: b.String()})
	if err != nil {
		t.Fatal(err)
	}
	// 12^12 paths, none reaching a field it may select.
	if got := Selection(s, s.Query.Fields.ForName("t0").Type, 12, Limits{MaxDepth: 14}); got != "{ __typename }" {
		t.Errorf("got %s", got)
	}
}
