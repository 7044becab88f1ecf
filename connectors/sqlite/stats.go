package sqlite

import "github.com/edgemcp/edgemcp/pipeline"

// PoolStats reports the database/sql pool for metrics
// (pipeline.PoolStatser).
func (c *Connector) PoolStats() pipeline.PoolStats {
	s := c.db.Stats()
	return pipeline.PoolStats{
		Max:      s.MaxOpenConnections,
		Open:     s.OpenConnections,
		InUse:    s.InUse,
		Idle:     s.Idle,
		Waits:    s.WaitCount,
		WaitTime: s.WaitDuration,
	}
}

var _ pipeline.PoolStatser = (*Connector)(nil)
