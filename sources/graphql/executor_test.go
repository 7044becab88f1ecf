package graphql

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// TestFieldToolCall: a field tool's call sends the generated operation
// with its arguments as variables, and the root field's object comes back
// as structuredContent.
func TestFieldToolCall(t *testing.T) {
	srv, s, x := library(t)
	tools := toolsByName(t, s, Config{Namespace: "lib", Mutations: true, Executor: x})
	r, err := call(t, tools["lib_book"], `{"id":"1"}`)
	if err != nil {
		t.Fatal(err)
	}
	got := structured(t, r)
	if got["title"] != "The Dispossessed" || got["author"].(map[string]any)["name"] != "Ursula K. Le Guin" || got["genre"] != "FICTION" {
		t.Errorf("book 1: %v", got)
	}
	last := srv.Last()
	if !strings.Contains(last.Query, "query EdgemcpCall($id: ID!) { book(id: $id) { id title") || last.Variables["id"] != "1" || last.OperationName != "EdgemcpCall" {
		t.Errorf("sent %+v", last)
	}
	// A connection, with a filter through input objects and an enum.
	r, err = call(t, tools["lib_books"], `{"filter":{"genre":"FICTION","author":{"name":"Ursula K. Le Guin"}},"first":1}`)
	if err != nil {
		t.Fatal(err)
	}
	got = structured(t, r)
	edges := got["edges"].([]any)
	if got["totalCount"] != 2.0 || len(edges) != 1 || edges[0].(map[string]any)["node"].(map[string]any)["id"] != "1" {
		t.Errorf("books: %v", got)
	}
	// A scalar root field is the result's value.
	r, err = call(t, tools["lib_count"], `{}`)
	if err != nil || r.Value != json.Number("3") {
		t.Errorf("count: %+v %v", r, err)
	}
	// A mutation.
	r, err = call(t, tools["lib_addBook"], `{"input":{"title":"Pale Blue Dot","genre":"SCIENCE","authorId":"a2"}}`)
	if err != nil || structured(t, r)["title"] != "Pale Blue Dot" {
		t.Fatalf("addBook: %+v %v", r, err)
	}
	if r, err := call(t, tools["lib_count"], `{}`); err != nil || r.Value != json.Number("4") {
		t.Errorf("count after addBook: %+v %v", r, err)
	}
}

// TestVariablesBound: an argument that looks like GraphQL arrives as the
// value it is; the document never holds it.
func TestVariablesBound(t *testing.T) {
	srv, s, x := library(t)
	tools := toolsByName(t, s, Config{Namespace: "lib", Executor: x})
	evil := `x") { id } } mutation { addBook(input: {title: "pwned", genre: FICTION, authorId: "a1"}) { id } } #`
	args, _ := json.Marshal(map[string]any{"text": evil, "select": "{ title }"})
	r, err := call(t, tools["lib_search"], string(args))
	if err != nil {
		t.Fatal(err)
	}
	if list, ok := r.Value.([]any); !ok || len(list) != 1 || list[0].(map[string]any)["title"] != evil {
		t.Errorf("search: the text came back as %v", r.Value)
	}
	last := srv.Last()
	if strings.Contains(last.Query, "pwned") || last.Variables["text"] != evil {
		t.Errorf("sent %+v", last)
	}
	if r, _ := call(t, tools["lib_count"], `{}`); r.Value != json.Number("3") {
		t.Errorf("a book was added: count %v", r.Value)
	}
}

// TestSelectOverride: `select` replaces the generated selection; one that
// the schema refuses, or that tries to be more than a selection set, fails
// validation and nothing is sent.
func TestSelectOverride(t *testing.T) {
	srv, s, x := library(t)
	tools := toolsByName(t, s, Config{Namespace: "lib", Executor: x, Limits: Limits{MaxFields: 6}})
	r, err := call(t, tools["lib_book"], `{"id":"3","select":"{ title author { name books { title } } }"}`)
	if err != nil {
		t.Fatal(err)
	}
	got := structured(t, r)
	if got["title"] != "The Left Hand of Darkness" || len(got) != 2 || len(got["author"].(map[string]any)["books"].([]any)) != 2 {
		t.Errorf("select: %v", got)
	}
	if q := srv.Last().Query; !strings.Contains(q, "books") || strings.Contains(q, "genre") {
		t.Errorf("sent %s", q)
	}
	before := len(srv.Requests())
	for _, tc := range []struct{ sel, want string }{
		{"{ title nosuch }", `Cannot query field "nosuch" on type "Book"`},
		{"{ title } } mutation { addBook(input: {title: \"x\", genre: FICTION, authorId: \"a1\"}) { id } } query Q { count", "select:"},
		{"{ ...F } fragment F on Book { id }", "no operations or fragments"},
		{"query { count }", "want a selection set"},
		{"{ title(x: $x) }", "select:"},
		{"{ id title genre year rating secret author { id } }", "more than 6 fields (max_fields)"},
	} {
		args, _ := json.Marshal(map[string]any{"id": "1", "select": tc.sel})
		_, err := call(t, tools["lib_book"], string(args))
		var pe *pipeline.Error
		if !errors.As(err, &pe) || pe.Stage != pipeline.StageValidation || !strings.Contains(pe.Message, tc.want) {
			t.Errorf("select %q: %v, want a validation error with %q", tc.sel, err, tc.want)
		}
	}
	if n := len(srv.Requests()); n != before {
		t.Errorf("%d refused calls reached the server", n-before)
	}
}

// TestArgumentValidation: arguments are checked against the schema's
// types before anything is sent.
func TestArgumentValidation(t *testing.T) {
	srv, s, x := library(t)
	tools := toolsByName(t, s, Config{Namespace: "lib", Mutations: true, Executor: x})
	before := len(srv.Requests())
	for _, tc := range []struct{ tool, args, want string }{
		{"lib_book", `{}`, `input "id": required`},
		{"lib_book", `{"id":"1","color":"red"}`, `unknown input "color"`},
		{"lib_books", `{"filter":{"genre":"POETRY"}}`, "POETRY is not a valid Genre"},
		{"lib_books", `{"first":1.5}`, "first"},
		{"lib_books", `{"filter":{"colour":"red"}}`, "unknown field"},
		{"lib_addBook", `{"input":{"title":"t","genre":"FICTION"}}`, "authorId"},
		{"lib_book", `{"id":"1","select":7}`, "want a string"},
	} {
		_, err := call(t, tools[tc.tool], tc.args)
		var pe *pipeline.Error
		if !errors.As(err, &pe) || pe.Stage != pipeline.StageValidation || !strings.Contains(pe.Message, tc.want) {
			t.Errorf("%s %s: %v, want a validation error with %q", tc.tool, tc.args, err, tc.want)
		}
	}
	if n := len(srv.Requests()); n != before {
		t.Errorf("%d refused calls reached the server", n-before)
	}
}

// TestRawQueryTool: a caller's document is validated against the schema,
// the mutation setting and the limits before it is sent.
func TestRawQueryTool(t *testing.T) {
	srv, s, x := library(t)
	tools := toolsByName(t, s, Config{Namespace: "lib", Executor: x, Limits: Limits{MaxDepth: 3, MaxFields: 20}})
	raw := tools["lib_query"]
	r, err := call(t, raw, `{"query":"query A($id: ID!) { book(id: $id) { title } } query B { count }","operationName":"A","variables":{"id":"2"}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := structured(t, r); got["book"].(map[string]any)["title"] != "Cosmos" {
		t.Errorf("raw query: %v", got)
	}
	if last := srv.Last(); last.OperationName != "A" || last.Variables["id"] != "2" {
		t.Errorf("sent %+v", last)
	}
	before := len(srv.Requests())
	for _, tc := range []struct{ args, want string }{
		{`{"query":"{ book(id: \"1\") { nosuch } }"}`, `Cannot query field "nosuch"`},
		{`{"query":"{ book(id: \"1\") { title"}`, "query:"},
		{`{"query":"mutation { addBook(input: {title: \"x\", genre: FICTION, authorId: \"a1\"}) { id } }"}`, "mutation"},
		{`{"query":"{ book(id: \"1\") { author { books { title } } } }"}`, "deeper than 3 fields (max_depth)"},
		{`{"query":"{ a: count b: count c: count d: count e: count f: count g: count h: count i: count j: count k: count l: count m: count n: count o: count p: count q: count r: count s: count t: count u: count }"}`, "more than 20 fields (max_fields)"},
		{`{"query":"query { ...F } fragment F on Query { book(id: \"1\") { author { ...G } } } fragment G on Author { books { id } }"}`, "max_depth"},
		{`{"query":"query A { count } query B { count }"}`, "name the one to run"},
		{`{"query":"query A($id: ID!) { book(id: $id) { title } }"}`, "variable.id must be defined"},
		{`{"query":"{ count }","extra":1}`, `unknown input "extra"`},
		{`{"query":"{ count }","variables":{"id":"1"}}`, "the operation declares no $id"},
		{`{"query":"query A($id: ID!) { book(id: $id) { title } }","variables":{"id":{"x":1}}}`, "variable.id"},
		{`{}`, `input "query": required`},
		{`{"query":"{ count }","variables":[1]}`, `input "variables": want an object`},
	} {
		_, err := call(t, raw, tc.args)
		var pe *pipeline.Error
		if !errors.As(err, &pe) || pe.Stage != pipeline.StageValidation || !strings.Contains(pe.Message, tc.want) {
			t.Errorf("%s: %v, want a validation error with %q", tc.args, err, tc.want)
		}
	}
	if n := len(srv.Requests()); n != before {
		t.Errorf("%d refused calls reached the server", n-before)
	}
	// With mutations on, the raw tool sends them.
	on := toolsByName(t, s, Config{Namespace: "lib", Mutations: true, Executor: x})
	r, err = call(t, on["lib_query"], `{"query":"mutation { addBook(input: {title: \"Contact\", genre: FICTION, authorId: \"a2\"}) { id title } }"}`)
	if err != nil || structured(t, r)["addBook"].(map[string]any)["title"] != "Contact" {
		t.Errorf("raw mutation: %+v %v", r, err)
	}
}

// TestErrorsAndPartialData: errors with null data, or beside a null root
// field, fail the call with the messages; errors beside data come back
// with the data.
func TestErrorsAndPartialData(t *testing.T) {
	srv, s, x := library(t)
	tools := toolsByName(t, s, Config{Namespace: "lib", Executor: x})
	_, err := call(t, tools["lib_broken"], `{}`)
	var pe *pipeline.PublicError
	if !errors.As(err, &pe) || pe.Public != "upstream GraphQL errors: the shelf collapsed (at broken)" {
		t.Errorf("errors with null data: %v", err)
	}
	// A nullable root field that failed: null beside its error, and
	// nothing else to give.
	_, err = call(t, tools["lib_lost"], `{}`)
	if !errors.As(err, &pe) || pe.Public != "upstream GraphQL errors: the book is lost (at lost)" {
		t.Errorf("errors beside a null root field: %v", err)
	}
	r, err := call(t, tools["lib_book"], `{"id":"2"}`)
	if err != nil {
		t.Fatal(err)
	}
	got := structured(t, r)
	data, _ := got["data"].(map[string]any)
	errs, _ := got["errors"].([]any)
	if data["title"] != "Cosmos" || data["secret"] != nil || len(errs) != 1 {
		t.Fatalf("partial data: %v", got)
	}
	if e := errs[0].(map[string]any); e["message"] != "secret of book 2 is sealed" || len(e["path"].([]any)) != 2 {
		t.Errorf("partial data error: %v", e)
	}
	// An HTTP error is the upstream's status.
	srv.FailNext(1, 500)
	_, err = call(t, tools["lib_count"], `{}`)
	var se *upstream.StatusError
	if !errors.As(err, &se) || se.Code != 500 || !strings.Contains(se.Error(), "try later") {
		t.Errorf("HTTP 500: %v", err)
	}
}

// TestRetries: a query sent as POST is retried after a 503; a mutation
// is never sent twice.
func TestRetries(t *testing.T) {
	srv, s, x := library(t)
	x.Retry = upstream.Retry{Attempts: 2}
	tools := toolsByName(t, s, Config{Namespace: "lib", Mutations: true, Executor: x})
	before := len(srv.Requests())
	srv.FailNext(1, 503)
	if r, err := call(t, tools["lib_count"], `{}`); err != nil || r.Value != json.Number("3") {
		t.Fatalf("query after a 503: %+v %v", r, err)
	}
	if n := len(srv.Requests()) - before; n != 2 {
		t.Errorf("query: %d requests, want 2", n)
	}
	before = len(srv.Requests())
	srv.FailNext(1, 503)
	_, err := call(t, tools["lib_addBook"], `{"input":{"title":"t","genre":"FICTION","authorId":"a1"}}`)
	var se *upstream.StatusError
	if !errors.As(err, &se) || se.Code != 503 {
		t.Errorf("mutation after a 503: %v", err)
	}
	if n := len(srv.Requests()) - before; n != 1 {
		t.Errorf("mutation: %d requests, want 1", n)
	}
}

// TestConcurrentCalls: the schema is shared by every call of a source's
// tools, read-only (run with -race).
func TestConcurrentCalls(t *testing.T) {
	_, s, x := library(t)
	tools := toolsByName(t, s, Config{Namespace: "lib", Executor: x})
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			var err error
			if i%2 == 0 {
				_, err = call(t, tools["lib_book"], `{"id":"1","select":"{ title author { name } }"}`)
			} else {
				_, err = call(t, tools["lib_query"], `{"query":"query A($f: BookFilter) { books(filter: $f) { totalCount } }","variables":{"f":{"genre":"FICTION"}}}`)
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestCredentials: the bearer token reaches the server on introspection
// and on every call.
func TestCredentials(t *testing.T) {
	srv, s, x := library(t, upstream.Bearer{Token: "lib-token"})
	tools := toolsByName(t, s, Config{Namespace: "lib", Executor: x})
	if _, err := call(t, tools["lib_count"], `{}`); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].OperationName != "EdgemcpIntrospection" {
		t.Fatalf("requests: %+v", reqs)
	}
	for _, r := range reqs {
		if r.Authorization != "Bearer lib-token" {
			t.Errorf("%s: Authorization %q", r.OperationName, r.Authorization)
		}
	}
}
