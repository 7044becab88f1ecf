package upstream

import (
	_ "github.com/edgemcp/edgemcp/stores/redis" // the shared store a per_caller redis credential loads

	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
)

func applyTo(t *testing.T, c Credential, id *pipeline.Identity) (*http.Request, error) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://upstream.invalid/x?a=1", nil)
	return req, c.Apply(context.Background(), req, &pipeline.Call{Identity: id})
}

// TestPerCallerFile: the caller's subject (or claim) picks its secret from
// the file; no identity, no claim or nobody on file is refused, and no
// refusal quotes a secret.
func TestPerCallerFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens.txt")
	os.WriteFile(file, []byte("# subject secret\nalice tok-alice\n\nbob tok-bob\nacme key-acme\n"), 0o600)
	b, err := Config{Credentials: []CredentialConfig{
		{Kind: "per_caller", As: "bearer", File: file},
		{Kind: "per_caller", As: "api_key", In: "query", Name: "key", File: file, Claim: "tenant"},
	}}.Build(caddy.Context{}, caddy.NewReplacer())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	bySubject, byClaim := b.Credentials[0], b.Credentials[1]
	if _, ok := bySubject.(CallerDependent); !ok {
		t.Error("per_caller does not say it depends on the caller")
	}
	req, err := applyTo(t, bySubject, &pipeline.Identity{Subject: "bob"})
	if err != nil || req.Header.Get("Authorization") != "Bearer tok-bob" {
		t.Errorf("bob: %q %v", req.Header.Get("Authorization"), err)
	}
	req, err = applyTo(t, byClaim, &pipeline.Identity{Subject: "carol", Claims: map[string]any{"tenant": "acme"}})
	if err != nil || req.URL.Query().Get("key") != "key-acme" || req.URL.Query().Get("a") != "1" {
		t.Errorf("acme by claim: %s %v", req.URL, err)
	}
	for _, tc := range []struct {
		c    Credential
		id   *pipeline.Identity
		want string
	}{
		{bySubject, nil, "no verified identity"},
		{bySubject, &pipeline.Identity{Subject: "mallory"}, "no upstream credential for this caller"},
		{byClaim, &pipeline.Identity{Subject: "alice"}, `no "tenant" claim`},
	} {
		_, err := applyTo(t, tc.c, tc.id)
		if got := pipeline.SafeText(err, ""); !strings.Contains(got, tc.want) || strings.Contains(err.Error(), "tok-") {
			t.Errorf("%+v: %v, want %q", tc.id, err, tc.want)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.txt")
	os.WriteFile(bad, []byte("alice tok-alice\nbob tok bob-secret\n"), 0o600)
	_, err = Config{Credentials: []CredentialConfig{{Kind: "per_caller", As: "bearer", File: bad}}}.Build(caddy.Context{}, caddy.NewReplacer())
	if err == nil || !strings.Contains(err.Error(), bad+":2") || strings.Contains(err.Error(), "bob-secret") {
		t.Errorf("bad line: %v", err)
	}
}

// TestPerCallerRedis looks the secret up in a real Redis.
func TestPerCallerRedis(t *testing.T) {
	prefix := testservices.RedisPrefix(t)
	rc := testservices.RedisClient(t)
	if err := rc.Set(context.Background(), prefix+"alice", "tok-alice", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// The store is the module mcp.stores.redis, cleaned up with ctx.
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	b, err := Config{Credentials: []CredentialConfig{{Kind: "per_caller", As: "bearer", Redis: testservices.RedisURL(t), RedisPrefix: prefix}}}.Build(ctx, caddy.NewReplacer())
	if err != nil {
		t.Fatal(err)
	}
	req, err := applyTo(t, b.Credentials[0], &pipeline.Identity{Subject: "alice"})
	if err != nil || req.Header.Get("Authorization") != "Bearer tok-alice" {
		t.Errorf("alice: %q %v", req.Header.Get("Authorization"), err)
	}
	if _, err := applyTo(t, b.Credentials[0], &pipeline.Identity{Subject: "bob"}); !strings.Contains(pipeline.SafeText(err, ""), "no upstream credential") {
		t.Errorf("bob: %v", err)
	}
}
