package graphql

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/sources/upstream"
)

// Backoff of the background introspection of a source whose endpoint did
// not answer at load (docs/graphql-source.md, The schema).
const (
	retryFirst = time.Second
	retryMax   = time.Minute
)

// pending is a schema that introspection has not delivered yet: it is
// asked for in the background, with backoff, until it arrives or the
// config is unloaded.
type pending struct {
	mu      sync.Mutex
	schema  *ast.Schema
	err     error         // the latest failure
	ready   chan struct{} // closed when the schema arrives
	changed atomic.Pointer[func()]
}

func newPending(err error) *pending { return &pending{err: err, ready: make(chan struct{})} }

// get returns the schema, or the error a call sees while it is missing.
func (p *pending) get() (*ast.Schema, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.schema != nil {
		return p.schema, nil
	}
	return nil, upstream.Failed("the GraphQL schema is not loaded yet (the endpoint did not answer introspection; retrying)", p.err)
}

// run retries in until it succeeds or ctx ends, waiting first, then
// twice as long after each failure, up to retryMax.
func (p *pending) run(ctx context.Context, in Introspector, first time.Duration, log *zap.Logger) {
	wait := first
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		s, err := in.Introspect(ctx)
		p.mu.Lock()
		p.schema, p.err = s, err
		p.mu.Unlock()
		if err == nil {
			close(p.ready)
			log.Info("graphql schema loaded by introspection: its field tools are served from now on",
				zap.String("endpoint", upstream.ShownURL(in.Endpoint)))
			if f := p.changed.Load(); f != nil {
				(*f)() // the gateway asks for the tools again (pipeline.ChangeNotifier)
			}
			return
		}
		log.Debug("graphql introspection failed again", zap.String("endpoint", upstream.ShownURL(in.Endpoint)), zap.Error(upstream.WithoutQuery(err)))
		wait = min(wait*2, retryMax)
	}
}
