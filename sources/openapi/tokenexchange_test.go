package openapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// TestTokenExchangeOpenAPI: an OpenAPI source's requests carry each
// caller's exchanged token (zitadel/oidc's provider as the authorization
// server), never the caller's own; the results, cached per caller, are
// not shared.
func TestTokenExchangeOpenAPI(t *testing.T) {
	as := testservices.StartTokenServer(t)
	srv := newRecorder(t, jsonAnswer(`[]`))
	built, err := upstream.Config{Credentials: []upstream.CredentialConfig{{Kind: "token_exchange", TokenURL: as.TokenURL,
		ClientID: as.ClientID, ClientSecret: as.ClientSecret, Audience: []string{as.Audience}}}}.Build(caddy.Context{}, caddy.NewReplacer())
	if err != nil {
		t.Fatal(err)
	}
	tools := toolsFor(t, srv, Config{Credentials: built.Credentials, CacheTTL: time.Minute})
	list := tools["listPets"]
	if list.Cache == nil || list.Cache.Shared {
		t.Errorf("a result fetched with a caller's token is cached for every caller: %+v", list.Cache)
	}
	own := map[string]string{"alice": as.SubjectToken(t, "alice"), "bob": as.SubjectToken(t, "bob")}
	for _, who := range []string{"alice", "bob", "alice"} {
		own := own[who]
		call := &pipeline.Call{Tool: list, Inputs: map[string]any{}, Identity: &pipeline.Identity{Provider: "sso", Subject: who},
			Request: &pipeline.RequestInfo{Header: http.Header{"Authorization": {"Bearer " + own}}}}
		if _, err := list.Executor.Execute(context.Background(), call); err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		token, _ := strings.CutPrefix(srv.last(t).Header.Get("Authorization"), "Bearer ")
		if token == own || as.Subject(token) != who {
			t.Errorf("%s's request carried %q, issued to %q", who, token, as.Subject(token))
		}
	}
	if as.Exchanges("alice") != 1 || as.Exchanges("bob") != 1 {
		t.Errorf("exchanges: alice %d bob %d", as.Exchanges("alice"), as.Exchanges("bob"))
	}
}
