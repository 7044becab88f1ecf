package cache

import "github.com/edgemcp/edgemcp/pipeline"

// CacheStats reports the first level's size and evictions for the
// gateway's metrics (pipeline.CacheStatser).
func (c *Cache) CacheStats() pipeline.CacheStats {
	return pipeline.CacheStats{Entries: int64(c.l1.Len()), Evictions: uint64(c.evictions.Load())}
}

var _ pipeline.CacheStatser = (*Cache)(nil)
