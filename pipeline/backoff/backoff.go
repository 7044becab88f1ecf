// Package backoff stands in front of a store that gateway nodes share
// (Redis: the cache's second level, the rate limits' counters): after the
// store fails, it is left alone for a while, so that a store that is down,
// or that accepts connections and never answers, costs one timeout per
// retry period rather than one per call. Going down and coming back are
// told once each.
package backoff

import (
	"sync"
	"time"
)

// Gate decides when the store is tried; a nil *Gate always tries it.
type Gate struct {
	retry time.Duration
	down  func(err error) // the store went down (failed while it was up)
	up    func()          // it answered again
	now   func() time.Time

	mu    sync.Mutex
	until time.Time // while down: when it is tried again
	isUp  bool
}

// New returns a Gate that leaves a failed store alone for retry; down and
// up (either may be nil) are called once per change of state.
func New(retry time.Duration, down func(err error), up func()) *Gate {
	return &Gate{retry: retry, down: down, up: up, now: time.Now, isUp: true}
}

// Open reports whether the store is to be tried now: when it is up, and
// once per retry period while it is down (that one try, whose Report
// brings it back or keeps it down, is the only one of the period).
func (g *Gate) Open() bool {
	if g == nil {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.isUp {
		return true
	}
	now := g.now()
	if now.Before(g.until) {
		return false
	}
	g.until = now.Add(g.retry)
	return true
}

// Report takes the outcome of a try.
func (g *Gate) Report(err error) {
	if g == nil {
		return
	}
	g.mu.Lock()
	wasUp := g.isUp
	if err != nil {
		g.isUp = false
		g.until = g.now().Add(g.retry)
	} else {
		g.isUp = true
	}
	g.mu.Unlock()
	switch {
	case err != nil && wasUp && g.down != nil:
		g.down(err)
	case err == nil && !wasUp && g.up != nil:
		g.up()
	}
}
