// Package ratelimit counts calls against limits of the form "n per period"
// (README, Rate limits). It is the generic cell rate algorithm: one
// timestamp per key (the theoretical arrival time of the next call), so a
// check is one read and one write, locally or in one Redis round trip
// (stores/redis), and a burst of n calls is allowed after a quiet
// period, then one every period/n.
package ratelimit

import (
	"context"
	"sync"
	"time"

	"github.com/edgemcp/edgemcp/pipeline/backoff"
)

// Limit is n calls per Period.
type Limit struct {
	N      int
	Period time.Duration
}

// interval is the time one call costs.
func (l Limit) interval() time.Duration { return l.Period / time.Duration(l.N) }

// Store keeps the timestamps of the limits' keys.
type Store interface {
	// Allow counts one call of key against l. When the call is over the
	// limit it returns false and how long until it would be allowed.
	Allow(ctx context.Context, key string, l Limit) (ok bool, retryAfter time.Duration, err error)
}

// Local is an in-process Store. It holds at most MaxKeys keys; beyond, it
// forgets those whose timestamp has passed (they are at rest anyway), and
// if none has, the oldest ones.
type Local struct {
	MaxKeys int
	now     func() time.Time

	mu  sync.Mutex
	tat map[string]time.Time
}

// NewLocal returns an empty Local store.
func NewLocal(maxKeys int) *Local {
	if maxKeys <= 0 {
		maxKeys = 100000
	}
	return &Local{MaxKeys: maxKeys, now: time.Now, tat: map[string]time.Time{}}
}

// Allow implements Store.
func (s *Local) Allow(_ context.Context, key string, l Limit) (bool, time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	ok, retry, next := decide(now, s.tat[key], l)
	if ok {
		if _, known := s.tat[key]; !known && len(s.tat) >= s.MaxKeys {
			s.evict(now)
		}
		s.tat[key] = next
	}
	return ok, retry, nil
}

// decide is the algorithm: tat is the key's theoretical arrival time (zero
// when unknown). A call is allowed when now is no earlier than tat minus
// the burst allowance (the period); it moves tat one interval on.
func decide(now, tat time.Time, l Limit) (ok bool, retryAfter time.Duration, next time.Time) {
	if tat.Before(now) {
		tat = now
	}
	next = tat.Add(l.interval())
	if allowAt := next.Add(-l.Period); now.Before(allowAt) {
		return false, allowAt.Sub(now), tat
	}
	return true, 0, next
}

// evict forgets the keys at rest (their timestamp passed), or half of the
// keys when none is.
func (s *Local) evict(now time.Time) {
	for k, t := range s.tat {
		if !t.After(now) {
			delete(s.tat, k)
		}
	}
	if len(s.tat) < s.MaxKeys {
		return
	}
	n := len(s.tat) / 2
	for k := range s.tat {
		if n == 0 {
			break
		}
		delete(s.tat, k)
		n--
	}
}

// Fallback is a shared Store (Redis) that falls back to a Local one while
// it fails, so that a Redis outage relaxes the limits to per-node ones
// instead of refusing or blocking calls. Gate (nil: none) leaves a failed
// Shared alone for a while, as the cache does its second level: a Redis
// that never answers costs one timeout per retry period, not one per call.
// OnFallback is called for each call answered locally.
type Fallback struct {
	Shared     Store
	Local      *Local
	Gate       *backoff.Gate
	OnFallback func()
}

// Allow implements Store.
func (f *Fallback) Allow(ctx context.Context, key string, l Limit) (bool, time.Duration, error) {
	if f.Gate.Open() {
		ok, retry, err := f.Shared.Allow(ctx, key, l)
		f.Gate.Report(err)
		if err == nil {
			return ok, retry, nil
		}
	}
	if f.OnFallback != nil {
		f.OnFallback()
	}
	return f.Local.Allow(ctx, key, l)
}
