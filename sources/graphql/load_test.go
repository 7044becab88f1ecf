package graphql

import (
	"context"
	"net/http"
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
