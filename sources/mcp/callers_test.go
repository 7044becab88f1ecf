package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// perCallerSource is a `session per_caller` source in front of up: the
// bearer list-token lists the tools, then the given credential is the
// caller's.
func perCallerSource(up *testservices.SessionUpstream, cred upstream.CredentialConfig) *Source {
	return &Source{URL: up.URL, Transport: TransportStreamable, Session: SessionPerCaller, Config: upstream.Config{
		Credentials: []upstream.CredentialConfig{{Kind: "bearer", Token: "list-token"}, cred},
	}}
}

// countTool is the source's count tool.
func countTool(t *testing.T, s *Source) *pipeline.Tool {
	t.Helper()
	tools, err := s.Tools("up")
	if err != nil || len(tools) != 1 || tools[0].Name != "up_count" {
		t.Fatalf("tools: %v %v", tools, err)
	}
	return tools[0]
}

// countAs calls count as subject with the bearer token (none when "").
func countAs(t *testing.T, tool *pipeline.Tool, subject, token string) (testservices.Count, error) {
	t.Helper()
	call := &pipeline.Call{Tool: tool, Inputs: map[string]any{}, Request: &pipeline.RequestInfo{Header: map[string][]string{}}}
	if subject != "" {
		call.Identity = &pipeline.Identity{Provider: "sso", Subject: subject}
	}
	if token != "" {
		call.Request.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := tool.Executor.Execute(context.Background(), call)
	if err != nil {
		return testservices.Count{}, err
	}
	return testservices.ParseCount(t, res.Native), nil
}

func mustCount(t *testing.T, tool *pipeline.Tool, subject, token string) testservices.Count {
	t.Helper()
	c, err := countAs(t, tool, subject, token)
	if err != nil {
		t.Fatalf("count as %s: %v", subject, err)
	}
	return c
}

// TestPerCallerPassthrough: each caller gets an upstream session of its
// own, made on its first call and carrying its own token (never another
// caller's nor the listing credential); the upstream's per-session state
// stays apart; a call without identity or without a token is refused
// before anything is sent, one whose token the server refuses says so.
func TestPerCallerPassthrough(t *testing.T) {
	up := testservices.StartSessionUpstream(t)
	s := perCallerSource(up, upstream.CredentialConfig{Kind: "passthrough"})
	provision(t, s)
	tool := countTool(t, s)
	if len(tool.FromIdentity) != 1 {
		t.Errorf("a per_caller tool must need an identity: %v", tool.FromIdentity)
	}
	if n := s.conn.callers.count(); n != 0 {
		t.Fatalf("%d caller sessions before any call", n)
	}
	a1 := mustCount(t, tool, "alice", "alice-token")
	a2 := mustCount(t, tool, "alice", "alice-token-refreshed")
	b1 := mustCount(t, tool, "bob", "bob-token")
	a3 := mustCount(t, tool, "alice", "alice-token-refreshed")
	if a1.Auth != "Bearer alice-token" || a2.Auth != "Bearer alice-token-refreshed" || b1.Auth != "Bearer bob-token" {
		t.Errorf("tokens upstream: %q %q %q", a1.Auth, a2.Auth, b1.Auth)
	}
	if a1.Session != a2.Session || a1.Session != a3.Session || b1.Session == a1.Session || a1.N != 1 || a2.N != 2 || a3.N != 3 || b1.N != 1 {
		t.Errorf("sessions: alice %+v %+v %+v, bob %+v", a1, a2, a3, b1)
	}
	if n := s.conn.callers.count(); n != 2 {
		t.Errorf("%d caller sessions, want 2", n)
	}

	_, err := countAs(t, tool, "", "carol-token")
	var safe pipeline.SafeError
	if !errors.As(err, &safe) || !strings.Contains(safe.SafeMessage(), "no verified identity") {
		t.Errorf("anonymous: %v", err)
	}
	_, err = countAs(t, tool, "carol", "")
	if !errors.As(err, &safe) || !strings.Contains(safe.SafeMessage(), "carries no bearer token") {
		t.Errorf("no token: %v", err)
	}
	_, err = countAs(t, tool, "dave", "refused-token")
	if !errors.As(err, &safe) || !strings.Contains(safe.SafeMessage(), "refused the caller's credential") {
		t.Errorf("a token the server refuses: %v", err)
	}
	if n := s.conn.callers.count(); n != 3 { // dave's entry, not connected
		t.Errorf("%d caller entries after refused calls, want 3", n)
	}
}

// TestPerCallerCredential: `credential per_caller` sends each caller the
// secret on file for its subject; a caller with none is refused.
func TestPerCallerCredential(t *testing.T) {
	up := testservices.StartSessionUpstream(t)
	file := filepath.Join(t.TempDir(), "secrets")
	if err := os.WriteFile(file, []byte("alice secret-a\nbob secret-b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := perCallerSource(up, upstream.CredentialConfig{Kind: "per_caller", As: "bearer", File: file})
	provision(t, s)
	tool := countTool(t, s)
	a := mustCount(t, tool, "alice", "")
	b := mustCount(t, tool, "bob", "")
	if a.Auth != "Bearer secret-a" || b.Auth != "Bearer secret-b" || a.Session == b.Session {
		t.Errorf("alice %+v, bob %+v", a, b)
	}
	_, err := countAs(t, tool, "mallory", "")
	var safe pipeline.SafeError
	if !errors.As(err, &safe) || !strings.Contains(safe.SafeMessage(), "no upstream credential for this caller") {
		t.Errorf("mallory: %v", err)
	}
}

// TestPerCallerBound: with max_caller_sessions 1, a second caller closes
// the first one's session (the upstream sees it ended), and the first
// caller's next call starts a new one; a session with a call in flight is
// not closed, the new caller is refused instead.
func TestPerCallerBound(t *testing.T) {
	up := testservices.StartSessionUpstream(t)
	s := perCallerSource(up, upstream.CredentialConfig{Kind: "passthrough"})
	s.MaxCallerSessions = 1
	provision(t, s)
	tool := countTool(t, s)
	a1 := mustCount(t, tool, "alice", "a")
	b1 := mustCount(t, tool, "bob", "b")
	waitUntil(t, "alice's session to be ended upstream", func() bool { return up.Ended(a1.Session) })
	a2 := mustCount(t, tool, "alice", "a")
	if a2.Session == a1.Session || a2.N != 1 {
		t.Errorf("alice again: %+v (before %+v)", a2, a1)
	}
	waitUntil(t, "bob's session to be ended upstream", func() bool { return up.Ended(b1.Session) })

	// A session with a call in flight is never closed for another caller:
	// that caller is refused until it ends.
	cs := s.conn.callers
	held, err := cs.acquire(&pipeline.Call{Identity: &pipeline.Identity{Provider: "sso", Subject: "alice"},
		Request: &pipeline.RequestInfo{Header: map[string][]string{"Authorization": {"Bearer a"}}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = countAs(t, tool, "bob", "b")
	var safe pipeline.SafeError
	if !errors.As(err, &safe) || !strings.Contains(safe.SafeMessage(), "has a call in flight") || up.Ended(a2.Session) {
		t.Errorf("bob while alice calls: %v (alice's session ended: %v)", err, up.Ended(a2.Session))
	}
	cs.release(held)
	if b2 := mustCount(t, tool, "bob", "b"); b2.N != 1 {
		t.Errorf("bob after alice's call: %+v", b2)
	}
	waitUntil(t, "alice's session to be ended for bob", func() bool { return up.Ended(a2.Session) })
}

// TestPerCallerIdle: a caller's session unused for caller_session_idle is
// closed by the sweep; one used meanwhile stays. The clock is the test's.
func TestPerCallerIdle(t *testing.T) {
	up := testservices.StartSessionUpstream(t)
	s := perCallerSource(up, upstream.CredentialConfig{Kind: "passthrough"})
	s.CallerSessionIdle = caddy.Duration(time.Minute)
	provision(t, s)
	cs := s.conn.callers
	now := time.Now()
	cs.mu.Lock()
	cs.now = func() time.Time { return now }
	cs.mu.Unlock()
	tool := countTool(t, s)
	a1 := mustCount(t, tool, "alice", "a")
	cs.mu.Lock()
	now = now.Add(45 * time.Second)
	cs.mu.Unlock()
	b1 := mustCount(t, tool, "bob", "b")
	cs.mu.Lock()
	now = now.Add(30 * time.Second) // alice idle 75s, bob 30s
	cs.mu.Unlock()
	cs.sweep()
	if !up.Ended(a1.Session) || up.Ended(b1.Session) || cs.count() != 1 {
		t.Errorf("after the sweep: alice ended %v, bob ended %v, %d sessions", up.Ended(a1.Session), up.Ended(b1.Session), cs.count())
	}
	if b2 := mustCount(t, tool, "bob", "b"); b2.Session != b1.Session || b2.N != 2 {
		t.Errorf("bob: %+v then %+v", b1, b2)
	}
	// Cleanup ends the rest.
	if err := s.Cleanup(); err != nil {
		t.Fatal(err)
	}
	s.key = ""
	if !up.Ended(b1.Session) {
		t.Error("bob's session outlived the source")
	}
}

// TestPerCallerSettings: a caller's credential without session per_caller
// is refused, saying what to add; per_caller is for HTTP servers.
func TestPerCallerSettings(t *testing.T) {
	for _, tc := range []struct {
		s    *Source
		want string
	}{
		{&Source{URL: "http://x/mcp", Config: upstream.Config{Credentials: []upstream.CredentialConfig{{Kind: "passthrough"}}}}, "add `session per_caller`"},
		{&Source{Command: "x", Session: SessionPerCaller}, "session per_caller is for HTTP servers"},
		{&Source{URL: "http://x/mcp", MaxCallerSessions: 3}, "need session per_caller"},
		{&Source{URL: "http://x/mcp", Session: "per_user"}, "want shared or per_caller"},
	} {
		if _, err := tc.s.settings(caddy.Context{}, caddy.NewReplacer()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.s, err, tc.want)
		}
	}
}

// BenchmarkPerCallerCall: a call on the caller's open upstream session
// (warm) against a call from a caller seen for the first time, which opens
// its session first (initialize, the GET stream), with at most 100
// sessions kept, so that most new callers also close the oldest.
//
//	go test ./sources/mcp -run '^$' -bench PerCallerCall -benchtime 2000x
func BenchmarkPerCallerCall(b *testing.B) {
	up := testservices.StartSessionUpstream(b)
	s := perCallerSource(up, upstream.CredentialConfig{Kind: "passthrough"})
	s.MaxCallerSessions = 100
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	if err := s.Provision(ctx); err != nil {
		b.Fatal(err)
	}
	defer s.Cleanup()
	tools, err := s.Tools("up")
	if err != nil || len(tools) != 1 {
		b.Fatal(tools, err)
	}
	tool := tools[0]
	run := func(b *testing.B, subject func(i int) string) {
		for i := 0; i < b.N; i++ {
			call := &pipeline.Call{Tool: tool, Inputs: map[string]any{},
				Identity: &pipeline.Identity{Provider: "sso", Subject: subject(i)},
				Request:  &pipeline.RequestInfo{Header: map[string][]string{"Authorization": {"Bearer t"}}}}
			if _, err := tool.Executor.Execute(context.Background(), call); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("warm", func(b *testing.B) { run(b, func(int) string { return "alice" }) })
	b.Run("new-caller", func(b *testing.B) { run(b, func(i int) string { return fmt.Sprint("caller-", i) }) })
}
