package guardrail

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"
)

// Store keeps the record of conversations: small values and counters
// that expire. A shared implementation (Redis: MGET, SET PX, INCR with
// PEXPIRE) lets gateway nodes see one record.
type Store interface {
	// Get returns the values of keys, nil where a key is absent.
	Get(ctx context.Context, keys ...string) ([][]byte, error)
	// Set stores value at key for ttl.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Incr adds one to the counter at key (absent: 0) and returns it;
	// the key expires ttl after this change.
	Incr(ctx context.Context, key string, ttl time.Duration) (int64, error)
}

// Memory is a Store in this process's memory, bounded: expired entries
// are swept as it grows, and past MaxEntries live ones a new key is
// refused (the guardrail then refuses what it cannot record: it fails
// closed).
type Memory struct {
	// MaxEntries bounds the keys kept; 0 means DefaultMaxEntries.
	MaxEntries int
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex
	entries map[string]memEntry
	sweepAt int
}

// DefaultMaxEntries bounds a Memory store: about a hundred thousand
// conversations of a few recorded tools.
const DefaultMaxEntries = 1 << 20

// ErrFull is returned by a Memory store that holds MaxEntries live keys.
var ErrFull = errors.New("the guardrail record is full")

type memEntry struct {
	value   []byte
	expires time.Time
}

func (m *Memory) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, keys ...string) ([][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	out := make([][]byte, len(keys))
	for i, k := range keys {
		if e, ok := m.entries[k]; ok && now.Before(e.expires) {
			out[i] = e.value
		}
	}
	return out, nil
}

// Set implements Store.
func (m *Memory) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.put(key, append([]byte(nil), value...), ttl)
}

// Incr implements Store.
func (m *Memory) Incr(_ context.Context, key string, ttl time.Duration) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	if e, ok := m.entries[key]; ok && m.now().Before(e.expires) {
		n, _ = strconv.ParseInt(string(e.value), 10, 64)
	}
	n++
	return n, m.put(key, strconv.AppendInt(nil, n, 10), ttl)
}

// put stores an entry; the caller holds mu.
func (m *Memory) put(key string, value []byte, ttl time.Duration) error {
	if m.entries == nil {
		m.entries = map[string]memEntry{}
	}
	max := m.MaxEntries
	if max <= 0 {
		max = DefaultMaxEntries
	}
	now := m.now()
	if _, ok := m.entries[key]; !ok && len(m.entries) >= max {
		m.sweep(now)
		if len(m.entries) >= max {
			return ErrFull
		}
	}
	m.entries[key] = memEntry{value: value, expires: now.Add(ttl)}
	// Sweep once the map has doubled since the last sweep: amortized
	// constant time per write.
	if len(m.entries) >= 2*m.sweepAt+1024 {
		m.sweep(now)
	}
	return nil
}

func (m *Memory) sweep(now time.Time) {
	for k, e := range m.entries {
		if !now.Before(e.expires) {
			delete(m.entries, k)
		}
	}
	m.sweepAt = len(m.entries)
}
