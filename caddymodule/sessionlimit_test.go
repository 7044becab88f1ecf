package caddymodule

import (
	"testing"
)

// TestMaxSessionsEvictsOldestIdle: with max_sessions 3, real sessions
// (raw HTTP, as any client) are evicted oldest idle first; an evicted
// session's next request gets 404, the client initializes again, and the
// others keep working.
func TestMaxSessionsEvictsOldestIdle(t *testing.T) {
	g := startGateway(t, `SITE {
	mcp /mcp {
		max_sessions 3
	}
}`)
	ping := func(s *rawSession) int {
		t.Helper()
		resp, _ := s.post(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		return resp.Status
	}
	const v = "2025-11-25"
	s1, s2, s3 := g.rawSession(t, v), g.rawSession(t, v), g.rawSession(t, v)
	if st := ping(s1); st != 200 { // s1 used last: s2 is now the oldest idle
		t.Fatalf("s1: HTTP %d", st)
	}
	s4 := g.rawSession(t, v)
	if st := ping(s2); st != 404 {
		t.Fatalf("evicted s2: HTTP %d, want 404", st)
	}
	for i, s := range []*rawSession{s1, s3, s4} {
		if st := ping(s); st != 200 {
			t.Fatalf("session %d after the eviction: HTTP %d", i, st)
		}
	}
	// The client of s2 starts over, which evicts s1 (the oldest idle now).
	s2 = g.rawSession(t, v)
	if st := ping(s2); st != 200 {
		t.Fatalf("s2 re-initialized: HTTP %d", st)
	}
	if st := ping(s1); st != 404 {
		t.Fatalf("s1 after the fourth session: HTTP %d, want 404", st)
	}
}

// TestMaxSessionsSharedWithToolsets: max_sessions is one budget for the
// endpoint and its toolsets: a session opened at a toolset's path evicts
// the oldest idle one at the endpoint, and the toolset's own session is
// ended when it is the oldest.
func TestMaxSessionsSharedWithToolsets(t *testing.T) {
	g := startGateway(t, `SITE {
	mcp /mcp {
		max_sessions 2
		toolset hi {
			tools greet-*
		}
	}
}`)
	ping := func(s *rawSession) int {
		t.Helper()
		resp, _ := s.post(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		return resp.Status
	}
	const v = "2025-11-25"
	at := *g
	at.URL = g.URL + "/hi"
	e1, e2 := g.rawSession(t, v), g.rawSession(t, v)
	t1 := at.rawSession(t, v) // the third: e1, the oldest idle, goes
	if st := ping(e1); st != 404 {
		t.Fatalf("the endpoint's oldest session after a toolset's: HTTP %d, want 404", st)
	}
	if st := ping(e2); st != 200 {
		t.Fatalf("e2: HTTP %d", st)
	}
	g.rawSession(t, v) // t1 is the oldest idle now
	if st := ping(t1); st != 404 {
		t.Fatalf("the toolset's session, the oldest: HTTP %d, want 404", st)
	}
}
