package auth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// A token with an unknown key id makes the gateway refetch the key set. While
// that fetch hangs (a slow identity provider), tokens whose key is known must
// be verified at once, and every caller with an unknown kid shares the one
// fetch. Before the fix the fetch ran under the cache's lock and every login
// queued behind it.
func TestJWKSRefreshDoesNotBlockKnownKeys(t *testing.T) {
	k1 := newSigningKey(t, "k1", jose.ES256)
	var (
		mu      sync.Mutex
		fetches int
		release = make(chan struct{})
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fetches++
		n := fetches
		mu.Unlock()
		if n > 1 {
			<-release // the refresh hangs until the test lets it go
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{k1.jwk()}})
	}))
	defer srv.Close()
	defer close(release)

	// The first unknown kid may refresh (none has before); a ghost that
	// only gets to run after that refresh ended is then throttled, as a
	// caller within minInterval is, rather than fetching again: the count
	// below does not hang on how the goroutines are scheduled.
	c, err := newJWKSCache(srv.URL, time.Hour, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.key(ctx, "k1"); err != nil {
		t.Fatal(err)
	}

	const ghosts = 4
	ghostDone := make(chan error, ghosts)
	for range ghosts {
		go func() {
			_, err := c.key(ctx, "ghost")
			ghostDone <- err
		}()
	}
	// Wait until the refresh is under way (the server holds it).
	for deadline := time.Now().Add(10 * time.Second); ; {
		mu.Lock()
		n := fetches
		mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the unknown kid did not trigger a refresh")
		}
		time.Sleep(time.Millisecond)
	}
	// The known key is served while the refresh is still held by the server.
	known := make(chan error, 1)
	go func() {
		_, err := c.key(ctx, "k1")
		known <- err
	}()
	select {
	case err := <-known:
		if err != nil {
			t.Fatalf("known key during a refresh: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a token with a known key waited for the refresh of an unknown one")
	}
	select {
	case err := <-ghostDone:
		t.Fatalf("an unknown kid returned (%v) before its refresh finished", err)
	default:
	}
	release <- struct{}{}
	for range ghosts {
		if err := <-ghostDone; err != errUnknownKey {
			t.Errorf("unknown kid: %v, want errUnknownKey", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if fetches != 2 {
		t.Errorf("%d fetches, want 2: the callers with an unknown kid share one refresh", fetches)
	}
}

// A caller whose context ends stops waiting for a refresh; the refresh goes
// on for the others.
func TestJWKSWaitFollowsContext(t *testing.T) {
	release := make(chan struct{})
	k1 := newSigningKey(t, "k1", jose.ES256)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{k1.jwk()}})
	}))
	defer srv.Close()
	c, err := newJWKSCache(srv.URL, time.Minute, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.key(ctx, "k1"); err != context.Canceled {
		t.Errorf("cancelled caller: %v, want context.Canceled", err)
	}
	close(release)
	if _, err := c.key(context.Background(), "k1"); err != nil {
		t.Errorf("after the refresh: %v", err)
	}
}
