package pipeline

import "sync"

// Coalescer runs a function again after events that call for it (a
// source's tools changed: list them again, rebuild the registry), with at
// most one run in flight and one more queued. A run that starts after an
// event sees it, so the queued run serves every event that came during
// the one in flight: a flood of events costs two runs, not one each.
type Coalescer struct {
	run func()

	mu      sync.Mutex
	running bool
	queued  bool
}

// NewCoalescer returns a Coalescer of run.
func NewCoalescer(run func()) *Coalescer { return &Coalescer{run: run} }

// Trigger asks for a run: one starts at once in a goroutine of its own,
// or after the one in flight.
func (c *Coalescer) Trigger() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		c.queued = true
		return
	}
	c.running = true
	go c.loop()
}

func (c *Coalescer) loop() {
	for {
		c.run()
		c.mu.Lock()
		if !c.queued {
			c.running = false
			c.mu.Unlock()
			return
		}
		c.queued = false
		c.mu.Unlock()
	}
}
