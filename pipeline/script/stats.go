package script

import (
	"sync/atomic"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// poolCounters count the calls that found every runtime of a script busy.
type poolCounters struct {
	waits    atomic.Int64
	waitNano atomic.Int64
}

// wait counts a wait as it begins (so a scrape sees calls stuck waiting)
// and returns the function that adds its duration when it ends.
func (c *poolCounters) wait() (done func()) {
	c.waits.Add(1)
	start := time.Now()
	return func() { c.waitNano.Add(int64(time.Since(start))) }
}

// PoolStats reports the script's runtime pool for metrics
// (pipeline.PoolStatser): Max is MaxRuntimes, InUse the calls running now,
// Idle the warm runtimes kept for the next calls, Waits the calls that
// waited for a free runtime. The figures are read without a lock, each
// exact on its own, so Open (InUse + Idle) may be off by one while a call
// starts or ends.
func (s *Script) PoolStats() pipeline.PoolStats {
	inUse, idle := len(s.slots), len(s.idle)
	return pipeline.PoolStats{
		Max:      s.opts.MaxRuntimes,
		Open:     inUse + idle,
		InUse:    inUse,
		Idle:     idle,
		Waits:    s.stats.waits.Load(),
		WaitTime: time.Duration(s.stats.waitNano.Load()),
	}
}

var _ pipeline.PoolStatser = (*Script)(nil)

// AbandonStats counts the runtimes abandoned by calls that returned at
// their limit while a native operation was still running (Script.run):
// Running are still busy now, Total were abandoned since the Script was
// loaded.
type AbandonStats struct {
	Running int64
	Total   int64
}

// AbandonStats reports the script's abandoned runtimes for metrics.
func (s *Script) AbandonStats() AbandonStats {
	return AbandonStats{Running: max(s.abandoned.Load(), 0), Total: s.abandonedTotal.Load()}
}
