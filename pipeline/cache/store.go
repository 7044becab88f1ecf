package cache

import (
	"context"
	"log/slog"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/backoff"
)

// Store is a shared second level (Redis in production): several gateway
// nodes read each other's results through it. Get returns nil, nil for an
// absent key. Implementations apply their own short timeouts.
type Store = pipeline.KeyValue

// l2 puts a backoff.Gate in front of a Store: when the store fails, the
// cache serves from the first level only and does not try the store again
// for a while, so a dead Redis costs one timeout per retry period, not one
// per call. Going down logs one warning, coming back one info line.
type l2 struct {
	store   Store
	timeout time.Duration
	gate    *backoff.Gate
	errs    func()
}

func newL2(store Store, timeout, retry time.Duration, log *slog.Logger, errs func()) *l2 {
	return &l2{store: store, timeout: timeout, errs: errs, gate: backoff.New(retry,
		func(err error) {
			log.Warn("cache second level unavailable: serving from the in-process cache only",
				slog.String("error", err.Error()), slog.Duration("retry_in", retry))
		},
		func() { log.Info("cache second level reachable again") })}
}

func (s *l2) available() bool { return s != nil && s.gate.Open() }

func (s *l2) outcome(err error) {
	if err != nil {
		s.errs()
	}
	s.gate.Report(err)
}

func (s *l2) get(ctx context.Context, key string) []byte {
	if !s.available() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	b, err := s.store.Get(ctx, key)
	s.outcome(err)
	return b
}

func (s *l2) set(ctx context.Context, key string, value []byte, ttl time.Duration) {
	if !s.available() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	s.outcome(s.store.Set(ctx, key, value, ttl))
}
