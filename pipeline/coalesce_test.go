package pipeline

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestCoalescer: 300 triggers while a run is in flight cost one more run,
// not 300; a trigger after the runs ended starts a new one.
func TestCoalescer(t *testing.T) {
	var runs atomic.Int64
	started := make(chan struct{}, 10)
	release := make(chan struct{})
	done := make(chan struct{}, 10)
	c := NewCoalescer(func() {
		runs.Add(1)
		started <- struct{}{}
		<-release
		done <- struct{}{}
	})
	c.Trigger()
	<-started // the first run is in flight
	var wg sync.WaitGroup
	for range 300 {
		wg.Add(1)
		go func() { defer wg.Done(); c.Trigger() }()
	}
	wg.Wait()
	close(release)
	<-done
	<-started // the queued run
	<-done
	// Every trigger came before the first run ended: nothing is queued.
	if n := runs.Load(); n != 2 {
		t.Errorf("%d runs for 301 triggers, want 2", n)
	}
	c.Trigger() // starts a run, or queues one on the loop about to end
	<-started
	<-done
	if n := runs.Load(); n != 3 {
		t.Errorf("%d runs after a later trigger, want 3", n)
	}
}
