package cache

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Store is a shared second level (Redis in production): several gateway
// nodes read each other's results through it. Get returns nil, nil for an
// absent key. Implementations apply their own short timeouts.
type Store interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// l2 puts a circuit breaker in front of a Store: when the store fails, the
// cache serves from the first level only and does not try the store again
// for a while, so a dead Redis costs one timeout per retry period, not one
// per call. Going down logs one warning, coming back one info line.
type l2 struct {
	store   Store
	timeout time.Duration
	retry   time.Duration
	log     *slog.Logger
	errs    func()

	mu        sync.Mutex
	downUntil time.Time
	down      bool
}

func (s *l2) available(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !now.Before(s.downUntil)
}

func (s *l2) outcome(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		if s.down {
			s.down = false
			s.log.Info("cache second level reachable again")
		}
		return
	}
	s.errs()
	s.downUntil = time.Now().Add(s.retry)
	if !s.down {
		s.down = true
		s.log.Warn("cache second level unavailable: serving from the in-process cache only",
			slog.String("error", err.Error()), slog.Duration("retry_in", s.retry))
	}
}

func (s *l2) get(ctx context.Context, key string) []byte {
	if s == nil || !s.available(time.Now()) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	b, err := s.store.Get(ctx, key)
	s.outcome(err)
	return b
}

func (s *l2) set(ctx context.Context, key string, value []byte, ttl time.Duration) {
	if s == nil || !s.available(time.Now()) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	s.outcome(s.store.Set(ctx, key, value, ttl))
}
