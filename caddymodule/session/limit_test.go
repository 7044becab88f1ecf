package session

import (
	"slices"
	"testing"
	"time"
)

// TestSessionLimitOrder: the bookkeeping behind max_sessions — busy
// sessions are never evicted, the least recently used idle one goes first,
// and sessions mcp-go already forgot (idle past the timeout) are dropped
// without being ended.
func TestSessionLimitOrder(t *testing.T) {
	var ended []string
	l := NewLimit(2, time.Hour, func(id string) { ended = append(ended, id) })

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
	l = NewLimit(1, time.Nanosecond, func(id string) { ended = append(ended, id) })
	l.opened("old")
	time.Sleep(time.Millisecond)
	l.opened("new")
	if len(ended) != 0 || l.len() != 1 {
		t.Fatalf("expired session: ended %v, %d tracked", ended, l.len())
	}
}
