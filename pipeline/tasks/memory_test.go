package tasks

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// clock is a test's time, moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestMemoryBounds: a Memory holds at most its entries and bytes; a write
// past them fails with ErrFull and evicts nothing live; expired entries
// are swept to make room; overwriting an entry counts only the change.
func TestMemoryBounds(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	m := NewMemory(2, 100)
	m.now = clk.now
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(m.Set(ctx, "a", []byte("1"), time.Minute))
	must(m.Set(ctx, "b", []byte("2"), time.Hour))
	if err := m.Set(ctx, "c", []byte("3"), time.Hour); !errors.Is(err, ErrFull) {
		t.Fatalf("a third entry of two: %v", err)
	}
	must(m.Set(ctx, "a", []byte("11"), time.Minute)) // an overwrite adds no entry
	if v, _ := m.Get(ctx, "a"); string(v) != "11" {
		t.Fatalf("a = %q", v)
	}
	clk.advance(2 * time.Minute) // a expires
	if v, _ := m.Get(ctx, "a"); v != nil {
		t.Fatalf("an expired entry read %q", v)
	}
	must(m.Set(ctx, "c", []byte("3"), time.Hour)) // the sweep made room
	if n, b := m.Size(); n != 2 || b != 4 {
		t.Fatalf("size %d entries %d bytes, want 2 and 4", n, b)
	}
	if err := m.Set(ctx, "big", make([]byte, 97), time.Hour); !errors.Is(err, ErrFull) {
		t.Fatalf("past the bytes: %v", err)
	}
	if v, _ := m.Get(ctx, "b"); string(v) != "2" {
		t.Fatalf("a live entry was lost: %q", v)
	}
}

// TestMemorySetIfAbsent: only the first of several writers stores, and an
// expired entry counts as absent.
func TestMemorySetIfAbsent(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	m := NewMemory(10, 1000)
	m.now = clk.now
	var won int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			ok, err := m.SetIfAbsent(ctx, "k", []byte{byte('0' + i)}, time.Minute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				won++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d writers stored, want 1", won)
	}
	clk.advance(time.Minute)
	if ok, err := m.SetIfAbsent(ctx, "k", []byte("x"), time.Minute); !ok || err != nil {
		t.Fatalf("after expiry: %v %v", ok, err)
	}
}

// TestMemoryOutcomeAdmitted: the entries bound admits tasks (Set); an
// outcome (SetIfAbsent) is bounded by bytes only.
func TestMemoryOutcomeAdmitted(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(1, 10)
	if err := m.Set(ctx, "r", []byte("1"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if ok, err := m.SetIfAbsent(ctx, "e", []byte("2"), time.Hour); !ok || err != nil {
		t.Fatalf("an outcome past the entries: %v %v", ok, err)
	}
	if _, err := m.SetIfAbsent(ctx, "x", []byte("too many bytes"), time.Hour); !errors.Is(err, ErrFull) {
		t.Fatalf("an outcome past the bytes: %v", err)
	}
}
