package graphql

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	graphqlgo "github.com/graph-gophers/graphql-go"

	"github.com/edgemcp/edgemcp/internal/testservices/graphqllib"
	"github.com/edgemcp/edgemcp/pipeline"
)

// TestProvision: the module reads the schema from an SDL file without
// asking the endpoint, and refuses bad endpoints and files with their names.
func TestProvision(t *testing.T) {
	srv := graphqllib.Start(t)
	path := filepath.Join(t.TempDir(), "library.graphql")
	if err := os.WriteFile(path, []byte(graphqllib.SDL), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	off := false
	s := &Source{Endpoint: srv.URL, Schema: path, Mutations: &off}
	if err := s.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	tools, err := s.Tools("lib")
	if err != nil || len(tools) != 10 {
		t.Fatalf("%d tools, %v", len(tools), err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests with an SDL file", n)
	}
	for _, tc := range []struct {
		s    Source
		want string
	}{
		{Source{Endpoint: "ftp://x/graphql", Schema: path}, "want an http or https URL"},
		{Source{Endpoint: "https://user:pw@x/graphql", Schema: path}, "put credentials in a credential"},
		{Source{Endpoint: srv.URL, Schema: path + ".missing"}, "library.graphql.missing"},
		{Source{Endpoint: srv.URL, Schema: path, Depth: 10}, "depth 10 must be less than max_depth 10"},
		{Source{Endpoint: srv.URL, Schema: path, MaxFields: 1}, "max_fields must be at least 2"},
		// An answer that refuses introspection is final, required or not.
		{Source{Endpoint: graphqllib.Start(t, graphqlgo.DisableIntrospection()).URL}, "is introspection disabled?"},
	} {
		err := tc.s.Provision(ctx)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "pw@") {
			t.Errorf("%+v: %v, want %q", tc.s, err, tc.want)
		}
	}
}

// TestProvisionEndpointDown: a required source whose endpoint is down
// fails the load; otherwise the source serves its raw query tool, which
// refuses calls until the endpoint comes up and a background
// introspection succeeds, and then answers.
func TestProvisionEndpointDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	required := &Source{Endpoint: "http://" + addr, Required: true}
	if err := required.Provision(ctx); err == nil || !strings.Contains(err.Error(), "introspection") {
		t.Fatalf("required: %v", err)
	}

	s := &Source{Endpoint: "http://" + addr, retryFirst: 10 * time.Millisecond}
	if err := s.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 1)
	s.OnChange(func() { changed <- struct{}{} })
	tools, err := s.Tools("lib")
	if err != nil || len(tools) != 1 || tools[0].Name != "lib_query" {
		t.Fatalf("tools while down: %v %v", tools, err)
	}
	raw := tools[0]
	_, err = call(t, raw, `{"query":"{ count }"}`)
	var pe *pipeline.PublicError
	if !errors.As(err, &pe) || !strings.Contains(pe.Public, "not loaded yet") {
		t.Fatalf("call while down: %v", err)
	}
	graphqllib.StartOn(t, addr)
	select {
	case <-changed: // the gateway is told, and asks for the tools again
	case <-time.After(time.Minute):
		t.Fatal("no schema a minute after the endpoint came up")
	}
	if all, err := s.Tools("lib"); err != nil || len(all) < 3 {
		t.Fatalf("tools once the schema arrived: %d %v", len(all), err)
	}
	r, err := call(t, raw, `{"query":"{ count }"}`)
	if err != nil || structured(t, r)["count"] != 3.0 {
		t.Fatalf("call after the endpoint came up: %+v %v", r, err)
	}
	// The schema arrived: documents are validated against it.
	if _, err := call(t, raw, `{"query":"{ nosuch }"}`); err == nil || !strings.Contains(err.Error(), `Cannot query field "nosuch"`) {
		t.Errorf("invalid document: %v", err)
	}
}

// TestSetFromIdentity: `set text {{ auth.claims.q }}` fixes the search
// field's argument to the caller's claim: it leaves the tool's schema, the
// endpoint receives the verified value as a variable, an argument of that
// name is refused before anything is sent, a caller without the claim is
// refused in authentication; the raw query tool is left as it is.
func TestSetFromIdentity(t *testing.T) {
	srv := graphqllib.Start(t)
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	s := &Source{Endpoint: srv.URL, Set: map[string]string{"text": "{{ auth.claims.q }}"}}
	if err := s.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	tools, err := s.Tools("lib")
	if err != nil {
		t.Fatal(err)
	}
	var search, raw *pipeline.Tool
	for _, tl := range tools {
		switch tl.Name {
		case "lib_search":
			search = tl
		case "lib_query":
			raw = tl
		}
	}
	if search == nil || raw == nil {
		t.Fatalf("tools: %v", tools)
	}
	if strings.Contains(string(search.InputSchema), `"text"`) || len(search.FromIdentity) != 1 {
		t.Errorf("search schema %s, from identity %q", search.InputSchema, search.FromIdentity)
	}
	if !strings.Contains(string(raw.InputSchema), `"query"`) {
		t.Errorf("the raw tool was changed: %s", raw.InputSchema)
	}
	id := &pipeline.Identity{Subject: "alice", Claims: map[string]any{"q": "Dune"}}
	before := len(srv.Requests())
	res, err := search.Executor.Execute(context.Background(), &pipeline.Call{Tool: search, Inputs: map[string]any{}, Identity: id})
	if err != nil || !strings.Contains(string(res.Native)+fmt.Sprint(res.Value), "Dune") {
		t.Fatalf("search as alice: %v %+v", err, res)
	}
	if reqs := srv.Requests(); len(reqs) != before+1 || reqs[len(reqs)-1].Variables["text"] != "Dune" {
		t.Errorf("the endpoint got %+v", reqs[before:])
	}
	_, err = search.Executor.Execute(context.Background(), &pipeline.Call{Tool: search, Inputs: map[string]any{"text": "Emma"}, Identity: id})
	var pe *pipeline.Error
	if !errors.As(err, &pe) || pe.Stage != pipeline.StageValidation || !strings.Contains(pe.Message, `unknown input "text"`) {
		t.Errorf("text as an argument: %v", err)
	}
	_, err = search.Executor.Execute(context.Background(), &pipeline.Call{Tool: search, Inputs: map[string]any{}, Identity: &pipeline.Identity{Subject: "bob"}})
	if !errors.As(err, &pe) || pe.Stage != pipeline.StageAuth {
		t.Errorf("no claim: %v", err)
	}
	if n := len(srv.Requests()); n != before+1 {
		t.Errorf("%d refused calls reached the endpoint", n-before-1)
	}
}
