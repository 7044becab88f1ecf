package redis

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

func open(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(url, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestStoreAgainstRedis(t *testing.T) {
	s := open(t, testservices.RedisURL(t))
	ctx := context.Background()
	key := fmt.Sprintf("cache-test:%d:", time.Now().UnixNano())
	t.Cleanup(func() { _ = s.client.Del(context.Background(), key+"a").Err() })

	if b, err := s.Get(ctx, key+"a"); err != nil || b != nil {
		t.Fatalf("absent key: %q %v", b, err)
	}
	val := []byte{0, 1, 2, 0xff, 'x'}
	if err := s.Set(ctx, key+"a", val, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if b, err := s.Get(ctx, key+"a"); err != nil || string(b) != string(val) {
		t.Fatalf("get: %q %v", b, err)
	}
	ttl, err := s.client.PTTL(ctx, key+"a").Result()
	if err != nil || ttl <= 0 || ttl > 2*time.Second {
		t.Fatalf("ttl %s %v", ttl, err)
	}
}

func TestStoreDownFailsFast(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nobody listens there now
	s := open(t, "redis://"+addr+"/0")
	start := time.Now()
	if _, err := s.Get(context.Background(), "k"); err == nil {
		t.Fatal("get from a dead Redis succeeded")
	}
	if err := s.Set(context.Background(), "k", []byte("v"), time.Second); err == nil {
		t.Fatal("set on a dead Redis succeeded")
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("two operations on a dead Redis took %s", d)
	}
}

func TestOpenHidesTheURL(t *testing.T) {
	_, err := Open("redis://user:s3cret@host:notaport/0", time.Second)
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("err = %v", err)
	}
}
