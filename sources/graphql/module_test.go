package graphql

import (
	"context"
	"errors"
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
	if err != nil || len(tools) != 7 {
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
