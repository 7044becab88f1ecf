package postgres

import (
	"context"
	"time"
)

// SetDefaultConnectTimeout lets tests shorten the connect bound.
func SetDefaultConnectTimeout(d time.Duration) (restore func()) {
	old := defaultConnectTimeout
	defaultConnectTimeout = d
	return func() { defaultConnectTimeout = old }
}

// ProveQuery runs the reset proof of sql on one of c's connections and
// returns its reasons.
func (c *Connector) ProveQuery(ctx context.Context, sql string) ([]string, error) {
	pc, err := c.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer pc.Release()
	return proveQuery(ctx, pc.Conn(), sql)
}

// SetProofClock gives the reset proofs a clock of the test's.
func (c *Connector) SetProofClock(now func() time.Time) { c.proofs.now = now }

// WaitProofs returns once no reset proof runs.
func (c *Connector) WaitProofs() { c.proofs.running.Wait() }
