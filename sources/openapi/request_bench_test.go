package openapi

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// benchSpec is an operation with a parameter in every location, an
// exploded query object and a JSON body.
const benchSpec = `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
 "servers": [{"url": "http://127.0.0.1:1/v1"}],
 "paths": {"/orders/{id}": {"post": {"operationId": "updateOrder", "parameters": [
   {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
   {"name": "tenant", "in": "query", "schema": {"type": "string"}},
   {"name": "limit", "in": "query", "schema": {"type": "integer"}},
   {"name": "filter", "in": "query", "style": "form", "explode": true, "schema": {"type": "object"}},
   {"name": "X-Request-Tag", "in": "header", "schema": {"type": "string"}},
   {"name": "prefs", "in": "cookie", "schema": {"type": "string"}}],
   "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}},
   "responses": {"200": {"description": "ok"}}}}}}`

// BenchmarkNewRequest measures building one call's HTTP request: the
// serializer and the check of every name an argument puts on the wire
// (protectedNames), with a `set` parameter and two credentials.
func BenchmarkNewRequest(b *testing.B) {
	x, call := benchCall(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := x.Op.newRequest(ctx, x.Base, call); err != nil {
			b.Fatal(err)
		}
	}
}

// benchCall is the tool of benchSpec with `set tenant acme`, an api_key
// query credential and a bearer token, and a call with every argument.
func benchCall(b *testing.B) (*Executor, *pipeline.Call) {
	spec := filepath.Join(b.TempDir(), "spec.json")
	if err := os.WriteFile(spec, []byte(benchSpec), 0o644); err != nil {
		b.Fatal(err)
	}
	doc, err := Load(context.Background(), spec, LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	creds := []upstream.Credential{upstream.APIKey{In: "query", Name: "api_key", Value: "k"}, upstream.Bearer{Token: "t"}}
	tools, _, err := Tools(doc, Config{BaseURL: "http://127.0.0.1:1/v1", Credentials: creds, Set: map[string]string{"tenant": "acme"}})
	if err != nil {
		b.Fatal(err)
	}
	return tools[0].Executor.(*Executor), &pipeline.Call{Tool: tools[0], Inputs: map[string]any{
		"id": "o-17", "limit": 10, "filter": map[string]any{"color": "red", "size": "L", "sort": "price"},
		"X-Request-Tag": "t1", "prefs": "dark",
		"body": map[string]any{"status": "shipped", "note": "left at the door", "items": []any{1, 2, 3}},
	}}
}

// BenchmarkNamesCheck measures the names check alone on the request of
// BenchmarkNewRequest: every argument's wire names and the body's fields.
func BenchmarkNamesCheck(b *testing.B) {
	x, call := benchCall(b)
	var params []*parameter
	var encs []encoded
	for _, p := range x.Op.Params {
		if v, ok := call.Inputs[p.Property]; ok && p.Fixed == nil {
			enc, err := p.encode(v)
			if err != nil {
				b.Fatal(err)
			}
			params, encs = append(params, p), append(encs, enc)
		}
	}
	body := call.Inputs[bodyProperty]
	encBody, err := x.Op.Body.encode(body)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for i, p := range params {
			if err := x.Op.protected.refuse(p, encs[i]); err != nil {
				b.Fatal(err)
			}
		}
		if err := x.Op.protected.refuseBody(x.Op.Body.Kind, body, encBody); err != nil {
			b.Fatal(err)
		}
	}
}
