package graphql

import (
	"encoding/json"
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
	f.Add("type Query { r: [R] } union R = A | B | C type A { x: Int!, o: O } type B { x: Int, o: P, r: [R] } type C { x: [Int], x_B: Int } type O { v: String! } type P { v: String }", uint8(3), uint8(10), uint8(200))
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

// TestSelectionConflictingUnion: members of a union that select one name
// with different types (URI! and URI, String and Int, objects whose
// fields differ in nullability) make a valid document: the later
// member's field is aliased, and the answer gets its own name back.
func TestSelectionConflictingUnion(t *testing.T) {
	s, err := gqlparser.LoadSchema(&ast.Source{Input: `
scalar URI
type App { name: String! logoUrl: URI! owner: Owner }
type Listing { name: String logoUrl: URI owner: Owner slug: String }
type Org { name: Int logoUrl: URI! owner: Boss logoUrl_Org: String }
type Owner { login: String! }
type Boss { login: String }
union Result = App | Listing | Org
type Query { search: [Result!]! }`})
	if err != nil {
		t.Fatal(err)
	}
	f := s.Query.Fields.ForName("search")
	gen := generate(s, f.Type, 2, Limits{})
	const want = "{ __typename ... on App { name logoUrl owner { login } } " +
		"... on Listing { name_Listing: name logoUrl_Listing: logoUrl slug owner { login } } " +
		"... on Org { name_Org: name logoUrl logoUrl_Org owner_Org: owner { login } } }"
	if got := render(gen); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	rf := &rootField{kind: ast.Query, field: f, selection: render(gen), restore: gen}
	req, err := rf.document(s, Limits{}.withDefaults(), Fixed{}, &pipeline.Call{Inputs: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	answer := `{"data":{"search":[
		{"__typename":"App","name":"a","logoUrl":"u","owner":{"login":"x"}},
		{"__typename":"Listing","name_Listing":null,"logoUrl_Listing":null,"slug":"s","owner":{"login":"y"}},
		{"__typename":"Org","name_Org":7,"logoUrl":"v","logoUrl_Org":"w","owner_Org":{"login":null}}]}}`
	var resp response
	if err := json.Unmarshal([]byte(answer), &resp); err != nil {
		t.Fatal(err)
	}
	r, err := result(&resp, 200, "search", req.restore)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(r.Value)
	const restored = `[{"__typename":"App","logoUrl":"u","name":"a","owner":{"login":"x"}},` +
		`{"__typename":"Listing","logoUrl":null,"name":null,"owner":{"login":"y"},"slug":"s"},` +
		`{"__typename":"Org","logoUrl":"v","logoUrl_Org":"w","name":7,"owner":{"login":null}}]`
	if string(got) != restored {
		t.Errorf("answer\n got %s\nwant %s", got, restored)
	}
}
