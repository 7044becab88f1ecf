package caddymodule

import (
	"sync"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestMCPSourcePerCallerTokens: with real JWTs through Caddy, a user's own
// broad token and a third-party app's narrow token for the same user
// (another azp, fewer scopes) get upstream sessions of their own, so that
// the narrow token's calls never ride the session the broad one opened
// (sessions were per subject, and a call could go upstream with the
// subject's latest token); a refreshed broad token keeps the broad
// session; calls with both tokens at once each reach the upstream with
// their own token.
func TestMCPSourcePerCallerTokens(t *testing.T) {
	idp := newTestIdP(t)
	up := testservices.StartSessionUpstream(t)
	g := startGateway(t, perCallerCaddyfile(idp, up, "credential passthrough", ""))
	broad := idp.token(t, "alice", "notes:read notes:write", map[string]any{"azp": "notes-web"}, time.Hour)
	narrow := idp.token(t, "alice", "notes:read", map[string]any{"azp": "third-party-app"}, time.Hour)
	refreshed := idp.token(t, "alice", "notes:read notes:write", map[string]any{"azp": "notes-web"}, 2*time.Hour)
	count := func(token string) testservices.Count {
		t.Helper()
		r := authSession(t, g, "2025-06-18", map[string]string{"Authorization": "Bearer " + token}).call(t, "notes_count")
		if r.Error != nil {
			t.Errorf("count: %+v", r.Error)
			return testservices.Count{}
		}
		return testservices.ParseCount(t, r.Result)
	}
	b, n, r := count(broad), count(narrow), count(refreshed)
	if n.Session == b.Session {
		t.Errorf("the narrow token's call went on the broad token's session %s", b.Session)
	}
	if r.Session != b.Session {
		t.Errorf("the refreshed token got session %s, want the broad token's %s", r.Session, b.Session)
	}
	if b.Auth != "Bearer "+broad || n.Auth != "Bearer "+narrow || r.Auth != "Bearer "+refreshed {
		t.Error("a call went upstream with another token than its own")
	}
	var wg sync.WaitGroup
	for i := range 12 {
		token := []string{broad, narrow, refreshed}[i%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := count(token); got.Auth != "Bearer "+token {
				t.Errorf("a call went upstream with another token than its own (%d bytes)", len(got.Auth))
			}
		}()
	}
	wg.Wait()
}
