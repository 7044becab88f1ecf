package mcp

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// countWith calls count as subject alice with the given claims and bearer
// token.
func countWith(t *testing.T, tool *pipeline.Tool, claims map[string]any, token string) testservices.Count {
	t.Helper()
	call := &pipeline.Call{Tool: tool, Inputs: map[string]any{}, Request: &pipeline.RequestInfo{Header: map[string][]string{}},
		Identity: &pipeline.Identity{Provider: "sso", Subject: "alice", Claims: claims}}
	call.Request.Header.Set("Authorization", "Bearer "+token)
	res, err := tool.Executor.Execute(context.Background(), call)
	if err != nil {
		t.Fatalf("count with %s: %v", token, err)
	}
	return testservices.ParseCount(t, res.Native)
}

// TestPerCallerSessionPerToken: one subject's tokens that say different
// things (a third-party app's narrow token and the user's broad one) get
// upstream sessions of their own: the narrow token's calls never ride the
// session the broad token opened (they did: sessions were per subject). A
// refreshed token (only exp, iat, nbf, jti differ) keeps its session. Each
// call goes upstream with its own token, also when calls with the other
// tokens of its session run at the same time (the session's latest token
// was sent).
func TestPerCallerSessionPerToken(t *testing.T) {
	up := testservices.StartSessionUpstream(t)
	s := perCallerSource(up, upstream.CredentialConfig{Kind: "passthrough"})
	provision(t, s)
	tool := countTool(t, s)
	broad := map[string]any{"azp": "notes-web", "scope": "notes:read notes:write", "iat": 1000.0, "exp": 5000.0, "jti": "a"}
	refreshed := map[string]any{"azp": "notes-web", "scope": "notes:read notes:write", "iat": 4000.0, "exp": 9000.0, "jti": "b"}
	narrow := map[string]any{"azp": "third-party", "scope": "notes:read", "iat": 1000.0, "exp": 5000.0, "jti": "c"}

	b1 := countWith(t, tool, broad, "broad-1")
	n1 := countWith(t, tool, narrow, "narrow-1")
	b2 := countWith(t, tool, refreshed, "broad-2")
	if n1.Session == b1.Session {
		t.Errorf("the narrow token's call went on the broad token's upstream session %s", b1.Session)
	}
	if b2.Session != b1.Session || b2.N != 2 {
		t.Errorf("the refreshed token got session %s (call %d), want the broad token's %s", b2.Session, b2.N, b1.Session)
	}
	if b1.Auth != "Bearer broad-1" || n1.Auth != "Bearer narrow-1" || b2.Auth != "Bearer broad-2" {
		t.Errorf("tokens upstream: %q %q %q", b1.Auth, n1.Auth, b2.Auth)
	}

	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			claims, token := broad, fmt.Sprintf("broad-%d", i)
			if i%2 == 1 {
				claims = refreshed
			}
			if got := countWith(t, tool, claims, token); got.Auth != "Bearer "+token || got.Session != b1.Session {
				t.Errorf("call with %s went upstream with %q on %s", token, got.Auth, got.Session)
			}
		}()
	}
	wg.Wait()
}

// BenchmarkCallerKey is what keying a per-caller session on the token's
// claims costs a call, for a JWT's usual dozen claims.
func BenchmarkCallerKey(b *testing.B) {
	id := &pipeline.Identity{Provider: "sso", Subject: "alice", Claims: map[string]any{
		"iss": "https://idp.example.com/", "aud": []any{"https://api.example.com/mcp"}, "azp": "notes-web",
		"scope": "notes:read notes:write", "iat": 1.7e9, "exp": 1.7e9 + 3600, "nbf": 1.7e9, "jti": "4f1c0a",
		"email": "alice@example.com", "tenant": "acme", "roles": []any{"editor", "viewer"}, "auth_time": 1.7e9}}
	b.ReportAllocs()
	for b.Loop() {
		_ = callerKey(id)
	}
}
