package mysql

import (
	"context"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Ping checks that the server answers (the gateway's connector guard uses
// it for `required` and to tell "connector unavailable" at startup). The
// error never carries the DSN.
func (c *Connector) Ping(ctx context.Context) error {
	if err := c.db.PingContext(ctx); err != nil {
		return &pipeline.PublicError{Public: msgUnavailable, Cause: err}
	}
	return nil
}

// MaxConns is the pool size, so the guard admits no more callers at once.
func (c *Connector) MaxConns() int { return c.db.Stats().MaxOpenConnections }

// PoolStats reports the database/sql pool for metrics.
func (c *Connector) PoolStats() pipeline.PoolStats {
	s := c.db.Stats()
	return pipeline.PoolStats{
		Max: s.MaxOpenConnections, Open: s.OpenConnections, InUse: s.InUse, Idle: s.Idle,
		Waits: s.WaitCount, WaitTime: s.WaitDuration,
	}
}

var _ pipeline.PoolStatser = (*Connector)(nil)
