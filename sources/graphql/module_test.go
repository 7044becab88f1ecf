package graphql

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/internal/testservices/graphqllib"
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
	} {
		err := tc.s.Provision(ctx)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "pw@") {
			t.Errorf("%+v: %v, want %q", tc.s, err, tc.want)
		}
	}
}
