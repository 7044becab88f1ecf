package graphql

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// TestErrorExcerptHoldsNoCredential: an endpoint that quotes the request's
// headers back in a non-2xx answer does not hand the caller the gateway's
// token or static header, nor the log the introspection failure goes to.
func TestErrorExcerptHoldsNoCredential(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte("rejected: " + r.Header.Get("Authorization") + " / " + r.Header.Get("X-Shop-Key")))
	}))
	defer srv.Close()
	creds := []upstream.Credential{upstream.Bearer{Token: "gql-token-1234"}, upstream.Header{Name: "X-Shop-Key", Value: "shop-key-5678"}}
	x := &Executor{Endpoint: srv.URL, Client: upstream.NewClient(http.DefaultTransport), Credentials: creds}
	_, _, err := x.send(context.Background(), &pipeline.Call{}, &request{Query: "{ a }", kind: ast.Query})
	msg := pipeline.SafeText(err, "")
	if !strings.HasPrefix(msg, "HTTP 401") || strings.Contains(msg, "gql-token-1234") || strings.Contains(msg, "shop-key-5678") {
		t.Errorf("the caller sees %q", msg)
	}
	_, err = Introspector{Endpoint: srv.URL, Client: x.Client, Credentials: creds}.Introspect(context.Background())
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || strings.Contains(err.Error(), "gql-token-1234") || strings.Contains(err.Error(), "shop-key-5678") {
		t.Errorf("introspection: %v", err)
	}
}
