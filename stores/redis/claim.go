package redis

import (
	"context"
	"fmt"
	"time"
)

// Claim records key for ttl unless it is already recorded, in one atomic
// SET NX PX, and reports whether this call recorded it: of several nodes
// claiming one key, exactly one gets true. The gateway claims each
// approval answer this way, so that it runs one call across every node
// (caddymodule's spentApprovals).
func (s *Store) Claim(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	ok, err := s.client.SetNX(ctx, key, 1, ttl).Result()
	if err != nil {
		return false, fmt.Errorf("redis claim: %w", err)
	}
	return ok, nil
}

// SetIfAbsent stores value under key for ttl unless key holds a value, in
// one atomic SET NX PX, and reports whether it stored it. The gateway's
// tasks write each task's one outcome this way (tasks.KV), so that of a
// call's end, a cancel and a lapsed lease on any nodes the first stands.
func (s *Store) SetIfAbsent(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	ok, err := s.client.SetNX(ctx, key, value, ttl).Result()
	if err != nil {
		return false, fmt.Errorf("redis set if absent: %w", err)
	}
	return ok, nil
}
