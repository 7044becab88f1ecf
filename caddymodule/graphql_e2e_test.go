package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/internal/testservices/graphqllib"
	_ "github.com/edgemcp/edgemcp/sources/graphql" // mcp.sources.graphql, as the root package registers it
)

// TestGraphQLSourceEndToEnd: a GraphQL endpoint's schema, read by
// introspection with the source's credential, becomes namespaced tools
// served by Caddy; calls carry the credential and bind their arguments as
// variables, on both transport paths and under the aliases; a document the
// schema refuses never reaches the endpoint.
func TestGraphQLSourceEndToEnd(t *testing.T) {
	up := graphqllib.Start(t)
	t.Setenv("EDGEMCP_TEST_LIB_TOKEN", "lib-secret-token")
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source lib graphql %s {
			credential bearer {env.EDGEMCP_TEST_LIB_TOKEN}
			mutations off
			retries 0
		}
	}
}`, up.URL))

	c := g.mcpClient(t)
	list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]mcp.Tool{}
	for _, tl := range list.Tools {
		byName[tl.Name] = tl
	}
	book, ok := byName["lib_book"]
	if !ok || byName["lib_query"].Name == "" || byName["lib_addBook"].Name != "" || byName["lib.book"].Name != "" {
		t.Fatalf("tools/list: %v", keys(byName))
	}
	if book.Annotations.ReadOnlyHint == nil || !*book.Annotations.ReadOnlyHint || !strings.Contains(book.Description, "Finds a book by its id.") {
		t.Errorf("lib_book: %+v", book)
	}
	if req := book.InputSchema.Required; len(req) != 1 || req[0] != "id" {
		t.Errorf("lib_book required: %v", req)
	}

	// mcp-go's client, by name and by alias.
	for _, name := range []string{"lib_book", "lib.book"} {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, map[string]any{"id": "1", "select": "{ title author { name } }"}
		res, err := c.CallTool(context.Background(), req)
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"author":{"name":"Ursula K. Le Guin"},"title":"The Dispossessed"}` {
			t.Errorf("%s: structuredContent %s", name, sc)
		}
		if last := up.Last(); last.Authorization != "Bearer lib-secret-token" || last.Variables["id"] != "1" {
			t.Errorf("%s: the endpoint saw %+v", name, last)
		}
	}

	// The raw session: the raw query tool, a refused mutation and a
	// select the schema refuses, both -32000 without a request sent.
	s := g.rawSession(t, "2025-06-18")
	if r := s.call(t, "lib_query", map[string]any{"query": "{ count }"}).tool(t); !strings.Contains(r.Content[0].Text, `"count":3`) {
		t.Errorf("raw query: %+v", r)
	}
	before := len(up.Requests())
	r := s.call(t, "lib_query", map[string]any{"query": `mutation { addBook(input: {title: "x", genre: FICTION, authorId: "a1"}) { id } }`})
	if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "mutations are off") {
		t.Errorf("mutation with mutations off: %+v", r.Error)
	}
	r = s.call(t, "lib.book", map[string]any{"id": "1", "select": "{ nosuch }"})
	if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, `Cannot query field "nosuch"`) {
		t.Errorf("invalid select: %+v", r.Error)
	}
	if n := len(up.Requests()) - before; n != 0 {
		t.Errorf("%d refused calls reached the endpoint", n)
	}
	// Errors with null data are -32000 with the message.
	r = s.call(t, "lib_broken", map[string]any{})
	if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "the shelf collapsed") {
		t.Errorf("errors with null data: %+v", r.Error)
	}
}

// TestGraphQLSourceLoadErrors: an endpoint that cannot be introspected
// fails the config of a required source, naming the source; the Caddyfile
// refuses bad settings with the line.
func TestGraphQLSourceLoadErrors(t *testing.T) {
	up := graphqllib.Start(t)
	up.Close()
	g := &gateway{t: t, port: freePort(t)}
	caddyMu.Lock()
	err := g.load(fmt.Sprintf(`SITE {
	mcp /mcp {
		source lib graphql %s {
			required
		}
	}
}`, up.URL))
	_ = caddy.Stop()
	caddyMu.Unlock()
	if err == nil || !strings.Contains(err.Error(), `source "lib"`) || !strings.Contains(err.Error(), "introspection") {
		t.Errorf("endpoint down: %v", err)
	}
	for _, tc := range []struct{ cfg, want string }{
		{"source lib graphql", "usage: source <name> graphql <url>"},
		{"source lib graphql http://x {\n\t\t\trequired yes\n\t\t}", "wrong argument count"},
		{"source lib graphql http://x {\n\t\t\tmutations maybe\n\t\t}", "mutations: want on or off"},
		{"source lib graphql http://x {\n\t\t\tdepth 0\n\t\t}", "depth must be a whole number"},
		{"source lib graphql http://x {\n\t\t\tmax_depth 2\n\t\t}", "depth 2 must be less than max_depth 2"},
		{"source lib graphql http://x {\n\t\t\tschema\n\t\t}", "schema needs one SDL file"},
		{"source lib graphql http://x {\n\t\t\tselect x\n\t\t}", `unrecognized sub-directive "select"`},
		{"source lib graphql http://x {\n\t\t\tinclude [x\n\t\t}", `include: bad pattern "[x"`},
		{"source lib graphql http://x {\n\t\t\tcredential magic\n\t\t}", `unknown kind "magic"`},
	} {
		got := adaptForTest(t, ":8080 {\n\tmcp {\n\t\t"+tc.cfg+"\n\t}\n}\n")
		if !strings.HasPrefix(got, "error: ") || !strings.Contains(got, tc.want) || !strings.Contains(got, "Caddyfile:") {
			t.Errorf("%q: %s, want an error with %q and the line", tc.cfg, got, tc.want)
		}
	}
}

// TestGraphQLSourceEndpointDown: a source that is not required loads with
// its endpoint down and serves its raw query tool alone, which says the
// schema is not loaded yet.
func TestGraphQLSourceEndpointDown(t *testing.T) {
	up := graphqllib.Start(t)
	up.Close()
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source lib graphql %s
	}
}`, up.URL))
	s := g.rawSession(t, "2025-06-18")
	r := s.call(t, "lib_query", map[string]any{"query": "{ count }"})
	if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "not loaded yet") {
		t.Errorf("raw tool while down: %+v", r.Error)
	}
	if r := s.call(t, "lib_book", map[string]any{"id": "1"}); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("a field tool while down: %+v", r.Error)
	}
}

// TestGraphQLSourceTypeScriptSDK: the official TypeScript SDK client lists
// a GraphQL source's tools through Caddy, calls a field tool with a
// generated and an explicit selection, the raw query tool, and sees a
// refused document as an error.
func TestGraphQLSourceTypeScriptSDK(t *testing.T) {
	dir := nodeDir(t)
	up := graphqllib.Start(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source lib graphql %s {
			mutations off
		}
	}
}`, up.URL))
	out, err := sdkClientRunner(t, dir, g.URL, `[
		{"op":"list"},
		{"op":"call","name":"lib_book","arguments":{"id":"1"}},
		{"op":"call","name":"lib_book","arguments":{"id":"1","select":"{ title }"}},
		{"op":"call","name":"lib_query","arguments":{"query":"{ count }"}},
		{"op":"call","name":"lib_query","arguments":{"query":"{ nosuch }"}}
	]`)(nil)
	if err != nil {
		t.Fatalf("sdk-client: %v\n%s", err, out)
	}
	var run struct {
		Steps []sdkStep `json:"steps"`
	}
	if err := json.Unmarshal(out, &run); err != nil || len(run.Steps) != 5 {
		t.Fatalf("sdk-client output %s: %v", out, err)
	}
	if tools := string(run.Steps[0].Tools); !strings.Contains(tools, `"lib_book"`) || !strings.Contains(tools, `"lib_query"`) {
		t.Errorf("tools: %s", tools)
	}
	text := func(i int) string {
		s := run.Steps[i]
		if s.Error != nil || s.Result == nil || len(s.Result.Content) == 0 {
			t.Fatalf("step %d: %+v", i, s.Error)
		}
		return s.Result.Content[0].Text
	}
	if full, short := text(1), text(2); !strings.Contains(full, "title") || !strings.Contains(full, "year") || strings.Contains(short, "year") {
		t.Errorf("generated %s\nexplicit %s", full, short)
	}
	if c := text(3); !strings.Contains(c, "3") {
		t.Errorf("raw count: %s", c)
	}
	if e := run.Steps[4]; (e.Error == nil || !strings.Contains(e.Error.Message, `Cannot query field "nosuch"`)) &&
		(e.Result == nil || !e.Result.IsError) {
		t.Errorf("refused document: %+v %+v", e.Error, e.Result)
	}
}
