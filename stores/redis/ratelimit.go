package redis

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/edgemcp/edgemcp/pipeline/ratelimit"
)

// RateLimits is a ratelimit.Store in Redis, shared by every gateway node
// that uses it: one EVAL per check (the algorithm runs in Redis, on
// Redis's clock, so nodes whose clocks differ still agree).
type RateLimits struct {
	store  *Store
	prefix string
}

var _ ratelimit.Store = (*RateLimits)(nil)

// NewRateLimits keeps its keys under prefix on the Redis of s.
func NewRateLimits(s *Store, prefix string) *RateLimits {
	return &RateLimits{store: s, prefix: prefix}
}

// RateLimits implements pipeline.SharedStore: NewRateLimits on s.
func (s *Store) RateLimits(prefix string) ratelimit.Store { return NewRateLimits(s, prefix) }

// gcra is ratelimit's algorithm in Lua, in microseconds: KEYS[1] holds the
// theoretical arrival time; ARGV are the interval and the period. It
// answers {1, 0} when the call is allowed, {0, wait} when not.
var gcra = goredis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local nxt = tat + interval
local allow_at = nxt - period
if now < allow_at then return {0, allow_at - now} end
redis.call('SET', KEYS[1], nxt, 'PX', math.floor((nxt - now) / 1000) + 1)
return {1, 0}
`)

// Allow implements ratelimit.Store.
func (r *RateLimits) Allow(ctx context.Context, key string, l ratelimit.Limit) (bool, time.Duration, error) {
	interval := (l.Period / time.Duration(l.N)).Microseconds()
	res, err := gcra.Run(ctx, r.store.client, []string{r.prefix + key}, interval, l.Period.Microseconds()).Int64Slice()
	if err != nil {
		return false, 0, fmt.Errorf("redis rate limit: %w", err)
	}
	if len(res) != 2 {
		return false, 0, fmt.Errorf("redis rate limit: unexpected reply %v", res)
	}
	return res[0] == 1, time.Duration(res[1]) * time.Microsecond, nil
}
