package cache

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/edgemcp/edgemcp/pipeline"
)

// group runs one function per key at a time: concurrent misses on one key
// wait for the first one's result instead of each running the statement.
//
// The function runs on its own goroutine with a context detached from the
// first caller's cancellation (values and deadline kept), so a client that
// goes away does not fail the others waiting on the same key. Every waiter,
// the first included, leaves as soon as its own context is done.
type group struct {
	mu    sync.Mutex
	calls map[string]*flightCall
}

type flightCall struct {
	done      chan struct{}
	out       flightResult
	followers int
}

// flightResult is what one execution produced for all its waiters.
type flightResult struct {
	entry  []byte           // encoded entry, nil when not cacheable
	res    *pipeline.Result // the executor's result when entry is nil
	fromL2 bool             // served by the second level, nothing ran
	stale  []byte           // a stale second-level entry, for stale-if-error
	err    error            // the executor's error
}

// do runs fn once for all concurrent callers of key. shared reports whether
// this caller joined a run started by another.
func (g *group) do(ctx context.Context, key string, fn func(context.Context) flightResult) (out flightResult, shared bool, err error) {
	g.mu.Lock()
	if g.calls == nil {
		g.calls = map[string]*flightCall{}
	}
	c, running := g.calls[key]
	if running {
		c.followers++
	} else {
		c = &flightCall{done: make(chan struct{})}
		g.calls[key] = c
		go g.run(ctx, key, c, fn)
	}
	g.mu.Unlock()

	select {
	case <-c.done:
		return c.out, running, nil
	case <-ctx.Done():
		return flightResult{}, running, ctx.Err()
	}
}

func (g *group) run(ctx context.Context, key string, c *flightCall, fn func(context.Context) flightResult) {
	detached := context.WithoutCancel(ctx)
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		detached, cancel = context.WithDeadline(detached, dl)
		defer cancel()
	}
	defer func() {
		// This goroutine is outside the engine's recover: a panic in the
		// executor must become an error here, not kill the process.
		if r := recover(); r != nil {
			c.out = flightResult{err: fmt.Errorf("panic: %v\n%s", r, debug.Stack())}
		}
		g.mu.Lock()
		delete(g.calls, key)
		g.mu.Unlock()
		close(c.done)
	}()
	c.out = fn(detached)
}
