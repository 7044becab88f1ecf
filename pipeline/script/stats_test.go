package script

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPoolStats holds the only runtime of a script in a fetch that a local
// server answers when the test says so: a second call must wait, and the
// figures must say so while it happens and after.
func TestPoolStats(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	dir := files(t, map[string]string{"hold.js": `export default async ({url}) => (await fetch(url)).text()`})
	s := mustLoad(t, filepath.Join(dir, "hold.js"), Options{
		MaxRuntimes: 1, Timeout: 10 * time.Second, FetchAllow: []string{strings.TrimPrefix(srv.URL, "http://")},
	})
	if st := s.PoolStats(); st.Max != 1 || st.InUse != 0 || st.Idle != 1 || st.Open != 1 || st.Waits != 0 {
		t.Fatalf("fresh pool: %+v", st)
	}

	var wg sync.WaitGroup
	results := make([]string, 2)
	run := func(i int) {
		defer wg.Done()
		out, err := s.Call(context.Background(), map[string]any{"url": srv.URL})
		if err != nil {
			t.Errorf("call %d: %v", i, err) // not Fatal: another goroutine
		}
		results[i] = string(out)
	}
	wg.Add(2)
	go run(0)
	<-arrived // the first call holds the runtime
	go run(1)
	waitFor(t, func() bool { return s.PoolStats().Waits == 1 })
	if st := s.PoolStats(); st.InUse != 1 || st.Idle != 0 {
		t.Errorf("while one call runs and one waits: %+v", st)
	}
	close(release)
	wg.Wait()
	if results[0] != `"ok"` || results[1] != `"ok"` {
		t.Errorf("results %q", results)
	}
	st := s.PoolStats()
	if st.InUse != 0 || st.Idle != 1 || st.Waits != 1 || st.WaitTime <= 0 {
		t.Errorf("after both calls: %+v", st)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestThrowKeepsRuntime: a throw returns the runtime to the pool (a
// refusal must not cost a module evaluation); a timeout drops it.
func TestThrowKeepsRuntime(t *testing.T) {
	dir := files(t, map[string]string{"f.js": `export default ({mode}) => { if (mode === 'throw') throw new Error('no'); if (mode === 'spin') for (;;) {}; return 1 }`})
	s := mustLoad(t, filepath.Join(dir, "f.js"), Options{MaxRuntimes: 1, Timeout: 500 * time.Millisecond}) // room for a fresh runtime under -race
	if _, err := s.Call(context.Background(), map[string]any{"mode": "throw"}); err == nil {
		t.Fatal("no throw")
	}
	if st := s.PoolStats(); st.Idle != 1 {
		t.Errorf("after a throw: %+v, want the runtime back", st)
	}
	if _, err := s.Call(context.Background(), map[string]any{"mode": "spin"}); err == nil {
		t.Fatal("no timeout")
	}
	if st := s.PoolStats(); st.Idle != 0 {
		t.Errorf("after a timeout: %+v, want the runtime dropped", st)
	}
	if out, err := s.Call(context.Background(), map[string]any{}); err != nil || string(out) != "1" {
		t.Errorf("after both: %s %v", out, err)
	}
}
