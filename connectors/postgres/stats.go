package postgres

import "github.com/edgemcp/edgemcp/pipeline"

// PoolStats reports the pgx pool for metrics (pipeline.PoolStatser). A
// wait is an acquisition that found no idle connection.
func (c *Connector) PoolStats() pipeline.PoolStats {
	s := c.pool.Stat()
	return pipeline.PoolStats{
		Max:      int(s.MaxConns()),
		Open:     int(s.TotalConns()),
		InUse:    int(s.AcquiredConns()),
		Idle:     int(s.IdleConns()),
		Waits:    s.EmptyAcquireCount(),
		WaitTime: s.EmptyAcquireWaitTime(),
	}
}

var _ pipeline.PoolStatser = (*Connector)(nil)
