package redis

import (
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// PoolStats reports go-redis's connection pool for metrics.
func (c *Connector) PoolStats() pipeline.PoolStats {
	s := c.client.PoolStats()
	return pipeline.PoolStats{
		Max:      c.client.Options().PoolSize,
		Open:     int(s.TotalConns),
		InUse:    int(s.TotalConns) - int(s.IdleConns),
		Idle:     int(s.IdleConns),
		Waits:    int64(s.WaitCount),
		WaitTime: time.Duration(s.WaitDurationNs),
	}
}

var _ pipeline.PoolStatser = (*Connector)(nil)
