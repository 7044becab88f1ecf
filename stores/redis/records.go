package redis

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/edgemcp/edgemcp/pipeline"
)

// GetMany reads keys in one MGET: the guardrail's record of a
// conversation (pipeline.Records).
func (s *Store) GetMany(ctx context.Context, keys ...string) ([][]byte, error) {
	vals, err := s.client.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, fmt.Errorf("redis mget: %w", err)
	}
	out := make([][]byte, len(keys))
	for i, v := range vals {
		if str, ok := v.(string); ok {
			out[i] = []byte(str)
		}
	}
	return out, nil
}

// Incr adds one to the counter at key and sets its expiry, in one
// MULTI/EXEC round trip, so that no node sees a counter without one.
func (s *Store) Incr(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	var incr *goredis.IntCmd
	_, err := s.client.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		incr = p.Incr(ctx, key)
		p.PExpire(ctx, key, ttl)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("redis incr: %w", err)
	}
	return incr.Val(), nil
}

var _ pipeline.Records = (*Store)(nil)
