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

// TestGraphQLSourceSetHoldsEndToEnd: `set tenant {{ auth.subject }}` on a
// GraphQL source whose raw query tool is on holds for every caller on
// every tool, through Caddy: tenant acme's documents that name another
// tenant (inline, by a variable, under an alias, in a fragment, in a
// select) are refused with -32000 naming the argument and never reach the
// endpoint; those that leave it out get acme's orders only, at the root
// and nested; a mutation hidden behind operationName is refused.
func TestGraphQLSourceSetHoldsEndToEnd(t *testing.T) {
	up := graphqllib.Start(t)
	t.Setenv("EDGEMCP_TEST_KEY_ACME", "acme-key-0123456789abcdef")
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		auth keys api_key {
			key {env.EDGEMCP_TEST_KEY_ACME} {
				subject acme
			}
		}
		default_auth keys
		source lib graphql %s {
			set tenant {{ auth.subject }}
			mutations off
			retries 0
		}
	}
}`, up.URL))
	hdr := map[string]string{"X-API-Key": "acme-key-0123456789abcdef"}
	s := authSession(t, g, "2025-06-18", hdr)
	call := func(tool string, args any) rpcResponse {
		s.nextID++
		a, _ := json.Marshal(args)
		r, _ := s.postWith(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, s.nextID, tool, a), hdr)
		return r
	}
	before := len(up.Requests())
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"lib_query", map[string]any{"query": `{ orders(tenant: "globex") { id tenant item } }`}},
		{"lib_query", map[string]any{"query": `query Q($t: String!) { orders(tenant: $t) { tenant } }`, "variables": map[string]any{"t": "globex"}}},
		{"lib_query", map[string]any{"query": `{ mine: orders { tenant } theirs: orders(tenant: "globex") { tenant } }`}},
		{"lib_query", map[string]any{"query": `{ customer(id: "c1") { ...F } } fragment F on Customer { orders(tenant: "globex") { tenant } }`}},
		{"lib_query", map[string]any{"query": `query A { count } query B { orders(tenant: "globex") { tenant } }`, "operationName": "B"}},
		{"lib_customer", map[string]any{"id": "c1", "select": `{ orders(tenant: "globex") { tenant } }`}},
	} {
		r := call(tc.tool, tc.args)
		if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, `argument "tenant"`) {
			t.Errorf("%s %v: %+v %s, want -32000 naming the argument", tc.tool, tc.args, r.Error, r.Result)
		}
	}
	r := call("lib_orders", map[string]any{"tenant": "globex"})
	if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, `unknown input "tenant"`) {
		t.Errorf("lib_orders with tenant: %+v", r.Error)
	}
	r = call("lib_query", map[string]any{"query": `mutation M { addBook(input: {title: "x", genre: FICTION, authorId: "a1"}) { id } } query Q { count }`, "operationName": "Q"})
	if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "mutations are off") {
		t.Errorf("hidden mutation: %+v", r.Error)
	}
	if n := len(up.Requests()) - before; n != 0 {
		t.Errorf("%d refused calls reached the endpoint", n)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"lib_query", map[string]any{"query": `{ orders { id tenant } customer(id: "c1") { orders { tenant } } }`}},
		{"lib_orders", map[string]any{}},
		{"lib_customer", map[string]any{"id": "c1"}},
		{"lib_customer", map[string]any{"id": "c1", "select": `{ o: orders { tenant } }`}},
	} {
		res := call(tc.tool, tc.args).tool(t)
		text := res.Content[0].Text
		if !strings.Contains(text, `"tenant":"acme"`) || strings.Contains(text, "globex") {
			t.Errorf("%s %v: %s, want acme's orders only", tc.tool, tc.args, text)
		}
		if last := up.Last(); last.Variables["tenant"] != "acme" {
			t.Errorf("%s: the endpoint got %v", tc.tool, last.Variables)
		}
	}
}

// TestGraphQLSourceGitHubSchema: GitHub's GraphQL schema (npm
// @octokit/graphql-schema) served by graphql-yoga on graphql-js, the
// reference implementation, becomes a source by introspection; every
// tool, queries and mutations, called through Caddy with its required
// arguments, sends a document graphql-js accepts and answers; search,
// whose union members disagree on logoUrl's and name's nullability,
// answers with its edges' nodes under the fields' own names; repository, which GitHub answers
// with null and an error on its path for a repository that does not
// exist, is -32000 with GitHub's message.
func TestGraphQLSourceGitHubSchema(t *testing.T) {
	port := freePort(t)
	startNodeServer(t, "graphql-github.mjs", port)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source gh graphql http://127.0.0.1:%d/graphql {
			required
			retries 0
		}
	}
}`, port))
	c := g.mcpClient(t)
	list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) < 250 {
		t.Fatalf("%d tools", len(list.Tools))
	}
	s := g.rawSession(t, "2025-06-18")
	failed := 0
	for _, tl := range list.Tools {
		if tl.Name == "gh_query" {
			continue
		}
		var schema map[string]any
		b, _ := json.Marshal(tl.InputSchema)
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		r := s.call(t, tl.Name, exampleOf(schema))
		if tl.Name == "gh_repository" {
			if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "Could not resolve to a Repository with the name 'text/text'. (at repository)") {
				t.Errorf("repository: %+v %s", r.Error, r.Result)
			}
			continue
		}
		if r.Error != nil || strings.Contains(string(r.Result), `"isError":true`) || strings.Contains(string(r.Result), `\"errors\"`) {
			failed++
			t.Errorf("%s: %+v %.300s", tl.Name, r.Error, r.Result)
		}
	}
	t.Logf("%d tools called, %d failed", len(list.Tools)-1, failed)
	r := s.call(t, "gh_search", map[string]any{"query": "x", "type": "USER"}).tool(t)
	var search struct {
		Edges []struct {
			Node map[string]any `json:"node"`
		} `json:"edges"`
		Nodes []map[string]any
	}
	if err := json.Unmarshal([]byte(r.Content[0].Text), &search); err != nil || len(search.Edges) != 3 {
		t.Fatalf("search: %s %v", r.Content[0].Text, err)
	}
	for _, e := range search.Edges {
		search.Nodes = append(search.Nodes, e.Node)
	}
	app, listing, org := search.Nodes[0], search.Nodes[1], search.Nodes[2]
	if app["logoUrl"] != "https://github.com/app.png" || app["name"] != "an app" ||
		listing["__typename"] != "MarketplaceListing" || listing["name"] != "a listing" || listing["logoUrl"] != nil ||
		org["login"] != "an-org" || org["name"] != nil {
		t.Errorf("search nodes: %v", search.Nodes)
	}
	for _, n := range search.Nodes {
		for k := range n {
			if strings.Contains(k, "_MarketplaceListing") || strings.Contains(k, "_Organization") {
				t.Errorf("search: an alias %q in %v", k, n)
			}
		}
		if _, ok := n["logoUrl"]; !ok && n["__typename"] != "Organization" {
			t.Errorf("search: no logoUrl in %v", n)
		}
	}
}

// exampleOf is a value a JSON Schema of the gateway's tools accepts: its
// required properties only, an enum's first value, an empty list, and a
// date for a custom scalar (which any string satisfies).
func exampleOf(schema map[string]any) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	switch schema["type"] {
	case "string":
		return "text"
	case "integer", "number":
		return 1
	case "boolean":
		return true
	case "array":
		return []any{}
	case "object":
		props, _ := schema["properties"].(map[string]any)
		out := map[string]any{}
		req, _ := schema["required"].([]any)
		for _, name := range req {
			p, _ := props[name.(string)].(map[string]any)
			out[name.(string)] = exampleOf(p)
		}
		return out
	}
	return "2026-01-01T00:00:00Z"
}
