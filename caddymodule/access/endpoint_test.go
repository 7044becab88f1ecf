package access

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Without auth providers the endpoint layer lets a request through as it
// is; a tool without auth is allowed to anyone, one with auth to nobody
// whose request the layer has not seen.
func TestEndpointWithoutAuth(t *testing.T) {
	var e *Endpoint
	r := httptest.NewRequest("POST", "/mcp", nil)
	if got := e.Authenticate(httptest.NewRecorder(), r); got != r {
		t.Fatal("a nil Endpoint changed the request")
	}
	if RequestInfo(r.Context()) != nil || Identity(r.Context()) != nil {
		t.Error("a request the layer has not seen has a caller")
	}
	if !Allowed(context.Background(), nil, "open") {
		t.Error("a tool without auth is refused")
	}
	if Allowed(context.Background(), &pipeline.AuthCheck{ProviderName: "k"}, "guarded") {
		t.Error("a tool with auth is allowed without request info")
	}
}

// With providers but no default_auth, a request gets its request info
// and no identity.
func TestEndpointRequestInfo(t *testing.T) {
	e := New(Options{})
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.Header.Set("X-Api-Key", "k")
	got := e.Authenticate(httptest.NewRecorder(), r)
	if got == nil {
		t.Fatal("refused")
	}
	if info := RequestInfo(got.Context()); info == nil || info.Header.Get("X-Api-Key") != "k" {
		t.Errorf("request info: %+v", info)
	}
	if Identity(got.Context()) != nil {
		t.Error("an identity without default_auth")
	}
}
