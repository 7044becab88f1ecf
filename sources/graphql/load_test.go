package graphql

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	graphqlgo "github.com/graph-gophers/graphql-go"

	"github.com/edgemcp/edgemcp/internal/testservices/graphqllib"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// TestIntrospectionRefused: a server with introspection disabled fails the
// load with its message and the way out; a server that is down names no
// credential.
func TestIntrospectionRefused(t *testing.T) {
	srv := graphqllib.Start(t, graphqlgo.DisableIntrospection())
	in := Introspector{Endpoint: srv.URL, Client: upstream.NewClient(http.DefaultTransport)}
	_, err := in.Introspect(context.Background())
	if err == nil || !strings.Contains(err.Error(), "introspection") || !strings.Contains(err.Error(), "use `schema <file>`") {
		t.Errorf("introspection disabled: %v", err)
	}
	down := graphqllib.Start(t)
	down.Close()
	in = Introspector{Endpoint: down.URL, Client: in.Client,
		Credentials: []upstream.Credential{upstream.APIKey{In: "query", Name: "key", Value: "query-secret"}}}
	_, err = in.Introspect(context.Background())
	if err == nil || !strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "query-secret") {
		t.Errorf("endpoint down: %v", err)
	}
}

// TestSDLFromIntrospection: what a hostile answer could inject through a
// name or a default value is refused; descriptions are strings whatever
// they hold.
func TestSDLFromIntrospection(t *testing.T) {
	const head = `{"__schema":{"queryType":{"name":"Query"},"directives":[],"types":[`
	for _, tc := range []struct{ types, want string }{
		{`{"kind":"OBJECT","name":"Query","fields":[{"name":"a","args":[],"type":{"kind":"SCALAR","name":"Int"}}]},
		  {"kind":"OBJECT","name":"Evil { x: Int } type Query2","fields":[]}`, "is not a GraphQL name"},
		{`{"kind":"OBJECT","name":"Query","fields":[{"name":"a","type":{"kind":"SCALAR","name":"Int"},
		  "args":[{"name":"n","type":{"kind":"SCALAR","name":"Int"},"defaultValue":"1): Int } type Evil { x(y: Int = 2"}]}]}`, "is not one value"},
		{`{"kind":"OBJECT","name":"Query","fields":[{"name":"a","args":[],"type":{"kind":"NON_NULL","ofType":null}}]}`, "without ofType"},
	} {
		if _, err := sdlFromIntrospection([]byte(head + tc.types + `]}}`)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.types, err, tc.want)
		}
	}
	sdl, err := sdlFromIntrospection([]byte(head + `{"kind":"OBJECT","name":"Query","description":"\"\"\" } type Evil { x: Int } \"\"\"\nline two",
		"fields":[{"name":"a","args":[{"name":"n","type":{"kind":"SCALAR","name":"Int"},"defaultValue":"[1, 2]"}],"type":{"kind":"SCALAR","name":"Int"}}]}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseSchema("test", sdl)
	if err != nil {
		t.Fatalf("%v\n%s", err, sdl)
	}
	if s.Types["Evil"] != nil || !strings.Contains(s.Query.Description, "type Evil") || s.Query.Fields.ForName("a").Arguments[0].DefaultValue.String() != "[1,2]" {
		t.Errorf("parsed: %s", sdl)
	}
}

// TestSDLRepeats: a field or enum value an SDL file defines again alike,
// in the type or an extension, is read once with a warning naming the
// file and line; a field defined again differently fails the load.
func TestSDLRepeats(t *testing.T) {
	dir := t.TempDir()
	alike := filepath.Join(dir, "alike.graphql")
	os.WriteFile(alike, []byte(`type Query {
  a(x: Int = 1): Int
  b: String
  a(x: Int = 1): Int
}
enum E { X Y X }
extend type Query { b: String e: E }
`), 0o600)
	s, warnings, err := LoadSDL(alike, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		alike + ":4: field Query.a is defined again, alike: the repeat is ignored",
		alike + ":6: enum value E.X is defined again: the repeat is ignored",
		alike + ":7: field Query.b is defined again, alike: the repeat is ignored",
	}
	if !slices.Equal(warnings, want) {
		t.Errorf("warnings:\n%s\nwant\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
	if len(s.Query.Fields) != 3+2 || len(s.Types["E"].EnumValues) != 2 { // a, b, e and the two introspection fields
		t.Errorf("fields %d, enum values %d", len(s.Query.Fields), len(s.Types["E"].EnumValues))
	}
	differ := filepath.Join(dir, "differ.graphql")
	os.WriteFile(differ, []byte("type Query {\n  a: Int\n  a(x: Int): Int\n}\n"), 0o600)
	if _, _, err := LoadSDL(differ, 0); err == nil || !strings.Contains(err.Error(), differ+":3: field Query.a is defined twice, differently (Int and Int x: Int)") {
		t.Errorf("differently: %v", err)
	}
}
