package upstream

import (
	"sync"
	"time"
)

// Breaker is a source's circuit breaker (`circuit_breaker { failures N
// window D cooldown D }`): after Failures failed requests within Window it
// opens, and for Cooldown every call fails at once with "source
// unavailable" instead of waiting on an upstream that is down. Then one
// trial request goes through (half-open): success closes the breaker,
// failure opens it again. A nil *Breaker lets everything through.
type Breaker struct {
	Failures int
	Window   time.Duration
	Cooldown time.Duration
	now      func() time.Time // time.Now; tests replace it

	mu        sync.Mutex
	fails     []time.Time // failures within the window, oldest first
	openUntil time.Time
	trial     bool // a half-open trial is in flight
}

// NewBreaker returns a closed breaker.
func NewBreaker(failures int, window, cooldown time.Duration) *Breaker {
	return &Breaker{Failures: failures, Window: window, Cooldown: cooldown, now: time.Now}
}

// ErrOpen is the answer while the breaker is open.
var ErrOpen = Failed("source unavailable", nil)

// allow admits a request, or returns ErrOpen.
func (b *Breaker) allow() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.openUntil.IsZero() {
		return nil
	}
	if b.now().Before(b.openUntil) || b.trial {
		return ErrOpen
	}
	b.trial = true // cooled down: this request is the trial
	return nil
}

// record counts a request's outcome.
func (b *Breaker) record(failed bool) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if !failed {
		if b.trial { // the trial succeeded: the upstream is back
			b.openUntil, b.trial, b.fails = time.Time{}, false, b.fails[:0]
		}
		return
	}
	if b.trial {
		b.trial, b.openUntil = false, now.Add(b.Cooldown)
		return
	}
	cut := 0
	for cut < len(b.fails) && now.Sub(b.fails[cut]) > b.Window {
		cut++
	}
	b.fails = append(b.fails[cut:], now)
	if len(b.fails) >= b.Failures {
		b.openUntil, b.fails = now.Add(b.Cooldown), b.fails[:0]
	}
}

// Open reports whether the breaker refuses calls now (for metrics).
func (b *Breaker) Open() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.openUntil.IsZero() && b.now().Before(b.openUntil)
}
