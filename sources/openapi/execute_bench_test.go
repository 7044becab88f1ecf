package openapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
)

// BenchmarkExecute is one proxied GET end to end through the executor
// (arguments checked, request built, sent, the JSON object answer made a
// result) to an in-process upstream answering a small object, as the
// bench's openapi scenario does through the gateway. The upstream's work
// is in the figures too, the same in every build. Run by hand:
//
//	go test ./sources/openapi -run '^$' -bench BenchmarkExecute -benchmem
func BenchmarkExecute(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/items/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%s,"name":"item %s","price":7.5,"tags":["bench","openapi"]}`, r.PathValue("id"), r.PathValue("id"))
	})
	up := httptest.NewServer(mux)
	b.Cleanup(up.Close)
	spec := filepath.Join(b.TempDir(), "items.json")
	if err := os.WriteFile(spec, []byte(`{"openapi": "3.0.3", "info": {"title": "items", "version": "1"},
 "paths": {"/items/{id}": {"get": {"operationId": "getItem",
   "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1}}],
   "responses": {"200": {"description": "an item"}}}}}}`), 0o644); err != nil {
		b.Fatal(err)
	}
	doc, err := Load(context.Background(), spec, LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	tools, _, err := Tools(doc, Config{BaseURL: up.URL + "/v1"})
	if err != nil {
		b.Fatal(err)
	}
	tool := tools[0]
	ctx := context.Background()
	b.ReportAllocs()
	id := int64(0)
	for b.Loop() {
		id++
		res, err := tool.Executor.Execute(ctx, &pipeline.Call{Tool: tool, Inputs: map[string]any{"id": id%10000 + 1}})
		if err != nil || len(res.Native) == 0 {
			b.Fatal(err)
		}
	}
}
