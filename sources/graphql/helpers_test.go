package graphql

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/edgemcp/edgemcp/internal/testservices/graphqllib"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// library starts the real GraphQL server and reads its schema by
// introspection.
func library(t *testing.T, creds ...upstream.Credential) (*graphqllib.Server, *ast.Schema, *Executor) {
	t.Helper()
	srv := graphqllib.Start(t)
	x := &Executor{Endpoint: srv.URL, Client: upstream.NewClient(http.DefaultTransport), Credentials: creds, Retry: upstream.Retry{}}
	s, err := Introspector{Endpoint: srv.URL, Client: x.Client, Credentials: creds}.Introspect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return srv, s, x
}

func toolsByName(t *testing.T, s *ast.Schema, cfg Config) map[string]*pipeline.Tool {
	t.Helper()
	tools, err := Tools(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*pipeline.Tool{}
	for _, tl := range tools {
		if out[tl.Name] != nil {
			t.Fatalf("tool %s twice", tl.Name)
		}
		if err := tl.Check(); err != nil {
			t.Fatal(err)
		}
		out[tl.Name] = tl
	}
	return out
}

// call runs a tool with arguments given as JSON (numbers as json.Number,
// as the gateway decodes them).
func call(t *testing.T, tl *pipeline.Tool, args string) (*pipeline.Result, error) {
	t.Helper()
	var in map[string]any
	if err := json.Unmarshal([]byte(args), &in); err != nil {
		t.Fatal(err)
	}
	in = numbers(t, args)
	return tl.Executor.Execute(context.Background(), &pipeline.Call{Tool: tl, Inputs: in})
}

func numbers(t *testing.T, args string) map[string]any {
	t.Helper()
	m, err := deepCopyJSON([]byte(args))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func deepCopyJSON(b []byte) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return deepCopy(m)
}

// structured is the structuredContent of a native result.
func structured(t *testing.T, r *pipeline.Result) map[string]any {
	t.Helper()
	if r.Native == nil {
		t.Fatalf("not a native result: %+v", r)
	}
	var v struct {
		StructuredContent map[string]any `json:"structuredContent"`
	}
	if err := json.Unmarshal(r.Native, &v); err != nil {
		t.Fatal(err)
	}
	return v.StructuredContent
}
