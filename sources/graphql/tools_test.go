package graphql

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/edgemcp/edgemcp/internal/testservices/graphqllib"
)

// TestToolsFromIntrospection: the schema read by introspection from a real
// server gives one tool per root field and the raw query tool, named into
// the namespace, with descriptions, annotations and argument schemas.
func TestToolsFromIntrospection(t *testing.T) {
	_, s, x := library(t)
	tools := toolsByName(t, s, Config{Namespace: "lib", Mutations: true, Executor: x})
	var names []string
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"lib_addBook", "lib_book", "lib_books", "lib_broken", "lib_count", "lib_customer", "lib_find", "lib_lost", "lib_orders", "lib_query", "lib_search"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	book := tools["lib_book"]
	if !strings.HasPrefix(book.Description, "Finds a book by its id.") || !slices.Equal(book.Aliases, []string{"lib.book"}) {
		t.Errorf("lib_book: %q %v", book.Description, book.Aliases)
	}
	if !*book.Annotations.ReadOnly || !*book.Annotations.OpenWorld || *tools["lib_addBook"].Annotations.ReadOnly {
		t.Errorf("annotations: book %+v, addBook %+v", book.Annotations, tools["lib_addBook"].Annotations)
	}
	if *tools["lib_query"].Annotations.ReadOnly {
		t.Error("the raw query tool says read-only with mutations on")
	}
	schemaOf := func(name string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(tools[name].InputSchema, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tc := range []struct{ tool, path, want string }{
		{"lib_book", "required", `["id"]`},
		{"lib_book", "properties.id", `{"type":"string"}`},
		{"lib_books", "required", `null`}, // no required argument
		{"lib_books", "properties.first", `{"default":10,"maximum":2147483647,"minimum":-2147483648,"type":"integer"}`},
		{"lib_books", "properties.filter.properties.genre.enum", `["FICTION","SCIENCE","HISTORY"]`},
		// BookFilter → AuthorFilter → BookFilter: the cycle is cut, described.
		{"lib_books", "properties.filter.properties.author.properties.wrote", `{"description":"Authors with such books.","type":"object"}`},
		{"lib_addBook", "required", `["input"]`},
		{"lib_addBook", "properties.input.required", `["title","genre","authorId"]`},
		{"lib_count", "properties", `{}`}, // a scalar: nothing to select
		{"lib_search", "properties.select.type", `"string"`},
		{"lib_query", "required", `["query"]`},
	} {
		var v any = schemaOf(tc.tool)
		for _, k := range strings.Split(tc.path, ".") {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		if got, _ := json.Marshal(v); string(got) != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.tool, tc.path, got, tc.want)
		}
	}
}

// TestToolsFromSDL: the same schema from an SDL file gives the same tools
// as introspection, and SDL errors name the file and line.
func TestToolsFromSDL(t *testing.T) {
	_, introspected, x := library(t)
	path := filepath.Join(t.TempDir(), "schema.graphql")
	if err := os.WriteFile(path, []byte(graphqllib.SDL), 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile, _, err := LoadSDL(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	a := toolsByName(t, introspected, Config{Namespace: "lib", Mutations: true, Executor: x})
	b := toolsByName(t, fromFile, Config{Namespace: "lib", Mutations: true, Executor: x})
	if len(a) != len(b) {
		t.Fatalf("%d tools by introspection, %d from SDL", len(a), len(b))
	}
	for name, ta := range a {
		tb := b[name]
		if tb == nil || string(ta.InputSchema) != string(tb.InputSchema) || ta.Description != tb.Description {
			t.Errorf("%s differs:\n%s %q\n%s %q", name, ta.InputSchema, ta.Description, tb.InputSchema, tb.Description)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.graphql")
	os.WriteFile(bad, []byte("type Query {\n  a: Int\n  b: Nope\n}\n"), 0o600)
	if _, _, err := LoadSDL(bad, 0); err == nil || !strings.Contains(err.Error(), "bad.graphql:3") || !strings.Contains(err.Error(), "Nope") {
		t.Errorf("bad SDL: %v", err)
	}
	if _, _, err := LoadSDL(path, 100); err == nil || !strings.Contains(err.Error(), "larger than 100 bytes") {
		t.Errorf("size bound: %v", err)
	}
}

// TestMutationsOff: no mutation tools, and the raw tool is read-only.
func TestMutationsOff(t *testing.T) {
	_, s, x := library(t)
	tools := toolsByName(t, s, Config{Namespace: "lib", Executor: x})
	if tools["lib_addBook"] != nil || !*tools["lib_query"].Annotations.ReadOnly {
		t.Errorf("mutations off: addBook %v, raw tool %+v", tools["lib_addBook"] != nil, tools["lib_query"].Annotations)
	}
}

// TestToolNameCollisions: a root field named like the raw tool, and a
// mutation named like a query, get their kind as a suffix.
func TestToolNameCollisions(t *testing.T) {
	s, err := gqlparser.LoadSchema(&ast.Source{Name: "c.graphql", Input: `
type Query { query: String, item(id: ID!): String }
type Mutation { item(id: ID!): String }`})
	if err != nil {
		t.Fatal(err)
	}
	tools := toolsByName(t, s, Config{Namespace: "c", Mutations: true, Executor: &Executor{}})
	for _, n := range []string{"c_query", "c_query_query", "c_item", "c_item_mutation"} {
		if tools[n] == nil {
			t.Errorf("no tool %s in %v", n, tools)
		}
	}
	if !strings.Contains(tools["c_item_mutation"].Description, "mutation field item") {
		t.Errorf("c_item_mutation: %q", tools["c_item_mutation"].Description)
	}
}
