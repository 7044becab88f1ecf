package conntest

import (
	"sync"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// RecoveryBound is how soon after a restarted server answers again the
// connector's calls must succeed (README, Faults).
const RecoveryBound = 5 * time.Second

// Restart stops srv under a connector whose pool holds conns idle
// connections and starts it again. call(i) is one call whose answer it
// checks itself (an error is what it returns). Before: every call
// succeeds. While down: every call fails with "database unavailable" (two
// rounds, so that the pool's dial errors pile up). After: a round of conns
// concurrent calls that all succeed comes within RecoveryBound; the time
// it took is logged.
func Restart(t *testing.T, srv *testservices.Private, conns int, call func(i int) error) {
	t.Helper()
	round := func() []error {
		errs := make([]error, conns)
		var wg sync.WaitGroup
		for i := range conns {
			wg.Go(func() { errs[i] = call(i) })
		}
		wg.Wait()
		return errs
	}
	for i, err := range round() {
		if err != nil {
			t.Fatalf("before the restart, call %d: %v", i, err)
		}
	}

	srv.Stop()
	for range 2 {
		for i, err := range round() {
			if err == nil {
				t.Fatalf("call %d succeeded with the server stopped", i)
			}
			SameValue(t, "while down", PublicErr(t, err).Public, "database unavailable")
		}
	}

	srv.Start()
	back := time.Now()
	for n := 0; ; n++ {
		var failed []error
		for _, err := range round() {
			if err != nil {
				failed = append(failed, err)
			}
		}
		if len(failed) == 0 {
			break
		}
		if n == 0 {
			t.Logf("first calls after the restart: %d of %d failed: %v", len(failed), conns, failed[0])
		}
		if time.Since(back) > RecoveryBound {
			t.Fatalf("calls still fail %s after the server is back: %v", RecoveryBound, failed)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("recovered %s after the server was back", time.Since(back).Round(time.Millisecond))
}
