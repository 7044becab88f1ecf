package redis

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestClaimOnce: of many claims of one key, on two clients (two nodes)
// at once, exactly one succeeds; the key expires with its ttl.
func TestClaimOnce(t *testing.T) {
	prefix := testservices.RedisPrefix(t)
	a := open(t, testservices.RedisURL(t))
	b := open(t, testservices.RedisURL(t))
	var won atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			ok, err := []*Store{a, b}[i%2].Claim(context.Background(), prefix+"k", time.Minute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d claims of one key succeeded, want 1", won.Load())
	}
	ttl, err := a.client.PTTL(context.Background(), prefix+"k").Result()
	if err != nil || ttl <= 0 || ttl > time.Minute {
		t.Fatalf("ttl %s %v", ttl, err)
	}
	if ok, err := a.Claim(context.Background(), prefix+"other", time.Minute); !ok || err != nil {
		t.Fatalf("another key: %v %v", ok, err)
	}
}

// TestClaimRedisDown is an error, never a claim.
func TestClaimRedisDown(t *testing.T) {
	s := open(t, "redis://127.0.0.1:1/0")
	if ok, err := s.Claim(context.Background(), "k", time.Second); ok || err == nil {
		t.Fatalf("claim on a dead Redis: %v %v", ok, err)
	}
}

// TestSetIfAbsentOnce: of two clients (two nodes) writing one key's value
// at once, exactly one stores it, and that value stays.
func TestSetIfAbsentOnce(t *testing.T) {
	prefix := testservices.RedisPrefix(t)
	a := open(t, testservices.RedisURL(t))
	b := open(t, testservices.RedisURL(t))
	var won atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			ok, err := []*Store{a, b}[i%2].SetIfAbsent(context.Background(), prefix+"k", []byte{byte('a' + i)}, time.Minute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d writes of one key succeeded, want 1", won.Load())
	}
	v, err := b.Get(context.Background(), prefix+"k")
	if err != nil || len(v) != 1 {
		t.Fatalf("value %q %v", v, err)
	}
	if ok, err := a.SetIfAbsent(context.Background(), prefix+"k", []byte("later"), time.Minute); ok || err != nil {
		t.Fatalf("a second write stored: %v %v", ok, err)
	}
	if again, _ := a.Get(context.Background(), prefix+"k"); string(again) != string(v) {
		t.Fatalf("value changed to %q", again)
	}
}
