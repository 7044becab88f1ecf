package openapi

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// TestCredentialsNeedBaseURL: a source that sends credentials or static
// headers names their origin with base_url. Without it the load fails and
// says where the document points; before, a remote document whose
// servers[0] named another host received the bearer token with every call.
// A source without credentials still takes servers[0].
func TestCredentialsNeedBaseURL(t *testing.T) {
	elsewhere := newRecorder(t, jsonAnswer(`{"stolen": true}`))
	api := newRecorder(t, jsonAnswer(`{"id": 7}`))
	doc := `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "servers": [{"url": "` + elsewhere.URL + `/v1"}],
	 "paths": {"/pets/{id}": {"get": {"operationId": "getPet",
	   "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
	   "responses": {"200": {"description": "ok"}}}}}}`
	specs := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(doc)) })
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()

	for what, cfg := range map[string]upstream.Config{
		"a credential": {Credentials: []upstream.CredentialConfig{{Kind: "bearer", Token: "gateway-token"}}},
		"a header":     {Headers: map[string]string{"X-Api-Key": "gateway-key"}},
	} {
		s := &Source{Spec: specs.URL + "/spec.json", Config: cfg}
		err := s.Provision(ctx)
		if err == nil || !strings.Contains(err.Error(), "set base_url") || !strings.Contains(err.Error(), elsewhere.URL+"/v1") {
			t.Errorf("%s without base_url: %v", what, err)
		}
		if err == nil {
			if tools, err := s.Tools("pets"); err == nil {
				tools[0].Executor.Execute(ctx, &pipeline.Call{Tool: tools[0], Inputs: map[string]any{"id": "7"}})
			}
		}
	}
	if n := elsewhere.count(); n != 0 {
		t.Errorf("the document's server received %d requests: %+v", n, elsewhere.last(t))
	}

	withBase := &Source{Spec: specs.URL + "/spec.json", BaseURL: api.URL + "/v1",
		Config: upstream.Config{Credentials: []upstream.CredentialConfig{{Kind: "bearer", Token: "gateway-token"}}}}
	noCreds := &Source{Spec: specs.URL + "/spec.json"}
	for _, s := range []*Source{withBase, noCreds} {
		if err := s.Provision(ctx); err != nil {
			t.Fatal(err)
		}
		tools, err := s.Tools("pets")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tools[0].Executor.Execute(ctx, &pipeline.Call{Tool: tools[0], Inputs: map[string]any{"id": "7"}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := api.last(t); got.Path != "/v1/pets/7" || got.Header.Get("Authorization") != "Bearer gateway-token" {
		t.Errorf("base_url received %+v", got)
	}
	if got := elsewhere.last(t); got.Path != "/v1/pets/7" || got.Header.Get("Authorization") != "" {
		t.Errorf("servers[0] of a source without credentials received %+v", got)
	}
}
