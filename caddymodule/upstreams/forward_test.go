package upstreams

import (
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestUpstreamHint: a server's ttlMs and cacheScope as a CacheHint; none
// is 0 and private, a negative ttlMs 0, and one beyond what a Duration
// holds stays positive.
func TestUpstreamHint(t *testing.T) {
	result := func(ttl int64, scope mcp.CacheScope, set bool) *mcp.ReadResourceResult {
		res := &mcp.ReadResourceResult{}
		if set {
			res.TTLMs, res.CacheScope = &ttl, scope
		}
		return res
	}
	for _, tt := range []struct {
		res     *mcp.ReadResourceResult
		ms      int64
		private bool
	}{
		{result(0, "", false), 0, true},
		{result(30000, mcp.CacheScopePublic, true), 30000, false},
		{result(5000, mcp.CacheScopePrivate, true), 5000, true},
		{result(-5, mcp.CacheScopePublic, true), 0, false},
		{result(1<<62, mcp.CacheScopePublic, true), 9223372036854, false},
	} {
		h := upstreamHint(tt.res)
		if h.TTL.Milliseconds() != tt.ms || h.Private != tt.private {
			t.Errorf("%+v: %v ms, private %v; want %d, %v", tt.res.CacheableResult, h.TTL.Milliseconds(), h.Private, tt.ms, tt.private)
		}
	}
}
