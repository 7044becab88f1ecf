package guardrail

import (
	"context"
	"fmt"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Shared is a Store over the store gateway nodes share (the guest module
// mcp.stores.redis): a rule holds across the nodes that use it.
type Shared struct {
	KV      pipeline.KeyValue
	Records pipeline.Records
}

// NewShared is s as a Store; an error when s keeps no records
// (pipeline.Records).
func NewShared(s pipeline.KeyValue) (*Shared, error) {
	r, ok := s.(pipeline.Records)
	if !ok {
		return nil, fmt.Errorf("the shared store %T cannot keep the guardrails' records", s)
	}
	return &Shared{KV: s, Records: r}, nil
}

// Get implements Store.
func (s *Shared) Get(ctx context.Context, keys ...string) ([][]byte, error) {
	return s.Records.GetMany(ctx, keys...)
}

// Set implements Store.
func (s *Shared) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return s.KV.Set(ctx, key, value, ttl)
}

// Incr implements Store.
func (s *Shared) Incr(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	return s.Records.Incr(ctx, key, ttl)
}

var _ Store = (*Shared)(nil)
