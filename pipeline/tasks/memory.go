package tasks

import (
	"context"
	"sync"
	"time"
)

// Memory is a KV in this process's memory, for a gateway without a shared
// store: tasks are then this node's alone. It is bounded by the number of
// entries and their bytes (keys and values). Expired entries are swept:
// at most once a sweepEvery on a write, and at once when a write would
// not fit. A write that still does not fit fails with ErrFull; a live
// entry is never evicted, since a task's outcome is its client's until
// its ttl.
//
// The entries bound applies to Set, which makes a task (its record and
// lease): it admits tasks. SetIfAbsent, which writes a task's one
// outcome, is bounded by bytes only, so that an admitted task always has
// room to end (a result too large for the bytes left ends it failed).
type Memory struct {
	maxEntries int
	maxBytes   int64
	now        func() time.Time // a test's clock

	mu    sync.Mutex
	m     map[string]memEntry
	bytes int64
	swept time.Time
}

type memEntry struct {
	value   []byte
	expires time.Time
}

// sweepEvery is how often a write sweeps expired entries when the bounds
// do not force it.
const sweepEvery = time.Minute

// NewMemory returns an empty Memory bounded by maxEntries entries and
// maxBytes bytes.
func NewMemory(maxEntries int, maxBytes int64) *Memory {
	return &Memory{maxEntries: maxEntries, maxBytes: maxBytes, now: time.Now, m: map[string]memEntry{}}
}

// Get implements KV.
func (m *Memory) Get(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[key]
	if !ok || !m.now().Before(e.expires) {
		return nil, nil
	}
	return e.value, nil // never changed in place: Set stores a copy
}

// Set implements KV.
func (m *Memory) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	_, err := m.put(key, value, ttl, false)
	return err
}

// SetIfAbsent implements KV.
func (m *Memory) SetIfAbsent(_ context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	return m.put(key, value, ttl, true)
}

func (m *Memory) put(key string, value []byte, ttl time.Duration, ifAbsent bool) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if now.Sub(m.swept) >= sweepEvery {
		m.sweep(now)
	}
	old, exists := m.m[key]
	if exists && !now.Before(old.expires) {
		m.remove(key, old)
		exists = false
	}
	if exists && ifAbsent {
		return false, nil
	}
	grow, added := int64(len(key)+len(value)), 1
	if exists {
		grow, added = int64(len(value)-len(old.value)), 0
	}
	fits := func() bool {
		return (ifAbsent || len(m.m)+added <= m.maxEntries) && m.bytes+grow <= m.maxBytes
	}
	if !fits() {
		m.sweep(now) // only expired entries go: key, if it exists, is live
		if !fits() {
			return false, ErrFull
		}
	}
	m.m[key] = memEntry{value: append([]byte(nil), value...), expires: now.Add(ttl)}
	m.bytes += grow
	return true, nil
}

// sweep removes the expired entries. Callers hold m.mu.
func (m *Memory) sweep(now time.Time) {
	m.swept = now
	for k, e := range m.m {
		if !now.Before(e.expires) {
			m.remove(k, e)
		}
	}
}

func (m *Memory) remove(key string, e memEntry) {
	delete(m.m, key)
	m.bytes -= int64(len(key) + len(e.value))
}

// Size returns the number of entries and their bytes, expired ones not yet
// swept included, for metrics.
func (m *Memory) Size() (entries int, bytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m), m.bytes
}
