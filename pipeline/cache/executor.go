package cache

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Status values of pipeline.Call.CacheStatus.
const (
	StatusHit   = "hit"
	StatusMiss  = "miss"
	StatusStale = "stale"
)

// MetaKey is the result _meta key under which a stale serve is announced.
const MetaKey = "edgemcp/cache"

// Wrap returns t's executor behind the cache according to t.Cache; a tool
// without a policy keeps its executor.
func (c *Cache) Wrap(t *pipeline.Tool) pipeline.Executor {
	if t.Cache == nil || t.Cache.TTL <= 0 || t.Executor == nil {
		return t.Executor
	}
	return &executor{cache: c, next: t.Executor, policy: *t.Cache}
}

// executor is a cached pipeline.Executor.
type executor struct {
	cache  *Cache
	next   pipeline.Executor
	policy pipeline.CachePolicy
}

// Unwrap returns the executor behind the cache.
func (x *executor) Unwrap() pipeline.Executor { return x.next }

func (x *executor) Execute(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
	if call.Task != nil {
		// The call becomes an upstream's task: its answer is a handle,
		// never a result to keep.
		return x.next.Execute(ctx, call)
	}
	key, err := x.key(ctx, call)
	if err != nil {
		return nil, err
	}
	if key == "" {
		return x.next.Execute(ctx, call)
	}
	c := x.cache
	now := time.Now()
	cached, found := c.getL1(key, now)
	if found && cached.fresh(now) {
		call.CacheStatus = StatusHit
		c.hits.Add(1)
		res, err := cached.result(call)
		return x.hint(res, err, cached.expires.Sub(now), call)
	}

	out, joined, err := c.flights.do(ctx, key, func(ctx context.Context) flightResult {
		return x.fill(ctx, key, call)
	})
	if err != nil {
		return nil, err // this caller's context ended
	}
	switch {
	case out.fromL2:
		call.CacheStatus = StatusHit
		c.hits.Add(1)
		c.l2Hits.Add(1)
	case out.err != nil:
		if ctx.Err() == nil {
			if !found && out.stale != nil {
				cached, found = decodeEntry(out.stale)
			}
			if found && cached.usableStale(time.Now(), c.stale) {
				return x.serveStale(call, cached)
			}
		}
		return nil, out.err
	default:
		call.CacheStatus = StatusMiss
		c.misses.Add(1)
		if joined {
			c.coalesced.Add(1)
		}
	}
	if out.entry == nil {
		// Not stored (too large, not JSON, or the backend said no-store):
		// the next call runs again. Joined callers share out.res, so each
		// gets a copy to carry its hint.
		if out.res == nil {
			return nil, nil
		}
		res := *out.res
		return x.hint(&res, nil, 0, call)
	}
	e, _ := decodeEntry(out.entry)
	res, err := e.result(call)
	return x.hint(res, err, time.Until(e.expires), call)
}

// hint sets the result's CacheHint: ttl left (never negative) and
// whether the key holds the caller's identity.
func (x *executor) hint(res *pipeline.Result, err error, ttl time.Duration, call *pipeline.Call) (*pipeline.Result, error) {
	if err != nil {
		return nil, err
	}
	res.CacheHint = &pipeline.CacheHint{TTL: max(ttl, 0), Private: x.private(call)}
	return res, nil
}

// private reports whether the call's key holds who is calling: one caller
// must never see another's cached result, so whenever there is an auth
// stage (or an identity) and the tool is not `cache shared`, it does.
func (x *executor) private(call *pipeline.Call) bool {
	return !x.policy.Shared && (call.Tool.Auth != nil || call.Identity != nil)
}

// fill runs once per key among concurrent misses: the second level first,
// then the real execution, whose result is stored in both levels.
func (x *executor) fill(ctx context.Context, key string, call *pipeline.Call) flightResult {
	c := x.cache
	var stale []byte
	if b := c.l2.get(ctx, c.prefix+key); b != nil {
		if e, ok := decodeEntry(b); ok {
			now := time.Now()
			if e.fresh(now) {
				_ = c.l1.Set(key, b)
				return flightResult{entry: b, fromL2: true}
			}
			if e.usableStale(now, c.stale) {
				stale = b
			}
		}
	}
	res, err := x.next.Execute(ctx, call)
	if err != nil {
		return flightResult{err: err, stale: stale}
	}
	ttl := x.policy.TTL
	if res.NoStore || res.Task != nil {
		return flightResult{res: res}
	}
	if res.MaxAge > 0 && res.MaxAge < ttl {
		ttl = res.MaxAge
	}
	b, ok := c.encodeEntry(res, time.Now(), ttl)
	if !ok || !c.store(ctx, key, b, ttl) {
		return flightResult{res: res}
	}
	return flightResult{entry: b}
}

// serveStale answers with an expired entry after the execution failed, and
// says so in the result's _meta.
func (x *executor) serveStale(call *pipeline.Call, e entry) (*pipeline.Result, error) {
	res, err := e.result(call)
	if err != nil {
		return nil, err
	}
	call.CacheStatus = StatusStale
	x.cache.staleServes.Add(1)
	res.CacheHint = &pipeline.CacheHint{Private: x.private(call)} // expired: keep it no longer
	res.Meta = map[string]any{MetaKey: map[string]any{
		"status":      StatusStale,
		"age_seconds": int64(time.Since(e.stored).Seconds()),
	}}
	return res, nil
}

// key is the cache key of a call: the tool, its connector or source, what
// determines the result (the rendered statement and bound values for a DB
// tool, the validated inputs otherwise) and, when the tool has auth and is
// not shared, who is calling (identityScope). "" means the call is not
// cached.
func (x *executor) key(ctx context.Context, call *pipeline.Call) (string, error) {
	var what []byte
	if k, ok := x.next.(pipeline.CacheKeyer); ok {
		b, err := k.CacheKey(ctx, call)
		if err != nil {
			var pe *pipeline.Error
			if errors.As(err, &pe) {
				return "", pe
			}
			return "", err
		}
		what = b
	} else {
		// encoding/json sorts map keys: equal inputs give equal bytes.
		b, err := json.Marshal(call.Inputs)
		if err != nil {
			return "", nil
		}
		what = b
	}
	if what == nil {
		return "", nil
	}
	// The hashed fields go into one buffer: a sha256.Sum256 of it is the
	// digest a streaming hash would give, without the hash's allocations.
	// On the stack while it fits (the usual statement and values).
	var small [512]byte
	buf := small[:0]
	buf = field(buf, call.Tool.Name)
	buf = field(buf, call.Tool.Source)
	buf = field(buf, what)
	if x.private(call) {
		if id := call.Identity; id != nil {
			scope, ok := identityScope(id)
			if !ok {
				return "", nil // claims JSON cannot express: run uncached
			}
			buf = field(buf, "identity")
			buf = field(buf, scope)
		} else {
			buf = field(buf, "anonymous")
		}
	}
	sum := sha256.Sum256(buf)
	var key strings.Builder
	key.Grow(len(call.Tool.Name) + 1 + hex.EncodedLen(len(sum)))
	key.WriteString(call.Tool.Name)
	key.WriteByte(':')
	var digits [2 * sha256.Size]byte
	hex.Encode(digits[:], sum[:])
	key.Write(digits[:])
	return key.String(), nil
}

// volatileClaims change from one token to the next without changing who the
// caller is (RFC 7519 4.1.4-4.1.7: expiry, issue time, not-before, token
// id). Leaving them out of the key lets a client that renews its token keep
// its cached results; every other claim (scope, tenant, audience, ...) may
// change what the caller is allowed to see, so it stays in.
var volatileClaims = map[string]bool{"exp": true, "iat": true, "nbf": true, "jti": true}

// identityScope is the part of the key that says who is calling: the
// provider's name, the subject and every claim but the volatile ones, as
// canonical JSON (encoding/json sorts map keys at every depth and writes
// numbers and strings one way), so that every node, and the same node after
// a reload, computes the same key. The key stores only the SHA-256 of it,
// never a claim or a credential in clear. ok is false when a claim has no
// JSON form (a script provider's odd value): such a call is not cached.
func identityScope(id *pipeline.Identity) (b []byte, ok bool) {
	claims := make(map[string]any, len(id.Claims))
	for k, v := range id.Claims {
		if !volatileClaims[k] {
			claims[k] = v
		}
	}
	b, err := json.Marshal(struct {
		Provider string         `json:"provider"`
		Subject  string         `json:"subject"`
		Claims   map[string]any `json:"claims"`
	}{id.Provider, id.Subject, claims})
	return b, err == nil
}

// field writes a length-prefixed string, so that no two different field
// sequences hash the same bytes.
func field[S string | []byte](buf []byte, s S) []byte {
	buf = binary.BigEndian.AppendUint64(buf, uint64(len(s)))
	return append(buf, s...)
}
