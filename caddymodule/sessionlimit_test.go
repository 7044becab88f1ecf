package caddymodule

import (
	"slices"
	"testing"
	"time"
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

// TestSessionLimitOrder: the bookkeeping behind max_sessions — busy
// sessions are never evicted, the least recently used idle one goes first,
// and sessions mcp-go already forgot (idle past the timeout) are dropped
// without being ended.
func TestSessionLimitOrder(t *testing.T) {
	var ended []string
	l := newSessionLimit(2, time.Hour, func(id string) { ended = append(ended, id) })

	l.opened("a")
	l.opened("b")
	doneA := l.begin("a") // a busy, b idle
	l.opened("c")         // over: b is the only idle one
	if !slices.Equal(ended, []string{"b"}) || l.len() != 2 {
		t.Fatalf("ended %v, %d tracked; want [b], 2", ended, l.len())
	}
	doneC := l.begin("c")
	l.opened("d") // a and c busy: nothing to evict, the bound is passed
	if len(ended) != 1 || l.len() != 3 {
		t.Fatalf("with every other session busy: ended %v, %d tracked", ended, l.len())
	}
	doneA()
	doneC()
	l.opened("e") // idle now, least recently used first: a, then c
	if !slices.Equal(ended, []string{"b", "a", "c"}) || l.len() != 2 {
		t.Fatalf("ended %v, %d tracked; want [b a c], 2", ended, l.len())
	}
	l.closed("d")
	if l.len() != 1 {
		t.Fatalf("after a DELETE: %d tracked", l.len())
	}

	// Past the idle timeout mcp-go has forgotten a session: not ended again.
	ended = nil
	l = newSessionLimit(1, time.Nanosecond, func(id string) { ended = append(ended, id) })
	l.opened("old")
	time.Sleep(time.Millisecond)
	l.opened("new")
	if len(ended) != 0 || l.len() != 1 {
		t.Fatalf("expired session: ended %v, %d tracked", ended, l.len())
	}
}
