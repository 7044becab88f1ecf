package ratelimit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/pipeline/backoff"
)

// TestLocal: a burst of n, then one per period/n; keys are independent;
// the retry delay says when the next call passes.
func TestLocal(t *testing.T) {
	now := time.Unix(1000, 0)
	s := NewLocal(0)
	s.now = func() time.Time { return now }
	l := Limit{N: 3, Period: 3 * time.Second}
	ctx := context.Background()
	for i := range 3 {
		if ok, _, _ := s.Allow(ctx, "alice", l); !ok {
			t.Fatalf("call %d of the burst refused", i+1)
		}
	}
	ok, retry, _ := s.Allow(ctx, "alice", l)
	if ok || retry != time.Second {
		t.Fatalf("4th call: ok=%t retry=%s, want refused for 1s", ok, retry)
	}
	if ok, _, _ := s.Allow(ctx, "bob", l); !ok {
		t.Fatal("another key shares the limit")
	}
	now = now.Add(999 * time.Millisecond)
	if ok, _, _ := s.Allow(ctx, "alice", l); ok {
		t.Fatal("allowed before the retry delay")
	}
	now = now.Add(time.Millisecond)
	if ok, _, _ := s.Allow(ctx, "alice", l); !ok {
		t.Fatal("refused after the retry delay")
	}
	// A long rest restores the whole burst, no more.
	now = now.Add(time.Hour)
	for i := range 3 {
		if ok, _, _ := s.Allow(ctx, "alice", l); !ok {
			t.Fatalf("after a rest, call %d refused", i+1)
		}
	}
	if ok, _, _ := s.Allow(ctx, "alice", l); ok {
		t.Fatal("a rest gave more than the burst")
	}
}

// TestLocalBounded: the store never holds more than MaxKeys keys.
func TestLocalBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	s := NewLocal(100)
	s.now = func() time.Time { return now }
	for i := range 1000 {
		s.Allow(context.Background(), string(rune('a'+i%26))+time.Duration(i).String(), Limit{N: 1, Period: time.Minute})
	}
	if n := len(s.tat); n > 100 {
		t.Fatalf("%d keys held", n)
	}
}

// failing is a shared store that fails, counting the tries.
type failing struct{ tries int }

func (f *failing) Allow(context.Context, string, Limit) (bool, time.Duration, error) {
	f.tries++
	return false, 0, errors.New("redis down")
}

// TestFallback answers locally while the shared store fails, and says so;
// with a gate, the store is tried once per retry period, and its going
// down told once.
func TestFallback(t *testing.T) {
	var fell, downs int
	shared := &failing{}
	f := &Fallback{Shared: shared, Local: NewLocal(0), OnFallback: func() { fell++ },
		Gate: backoff.New(time.Hour, func(error) { downs++ }, nil)}
	l := Limit{N: 1, Period: time.Minute}
	if ok, _, err := f.Allow(context.Background(), "k", l); !ok || err != nil {
		t.Fatalf("first call: %t %v", ok, err)
	}
	if ok, _, _ := f.Allow(context.Background(), "k", l); ok {
		t.Fatal("the local fallback does not limit")
	}
	if fell != 2 || shared.tries != 1 || downs != 1 {
		t.Fatalf("fallbacks counted %d, store tried %d times, down told %d times; want 2, 1, 1", fell, shared.tries, downs)
	}
}
