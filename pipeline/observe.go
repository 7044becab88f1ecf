package pipeline

import (
	"context"
	"time"
)

// Observer watches the stages of one call. The transport puts one in the
// call's context (WithObserver) and turns what it sees into spans and
// metrics; the pipeline itself stays free of any telemetry library. An
// Observer is used by one call at a time.
type Observer interface {
	// Stage begins a stage of call. The returned context is the stage's
	// (its span is the parent of anything the stage starts); end is called
	// once with the stage's failure, or nil.
	Stage(ctx context.Context, call *Call, stage Stage) (stageCtx context.Context, end func(err error))
	// Query begins one outbound call of the execution stage: a statement
	// on a connector, a Redis command, a source's HTTP request. end is
	// called once with its failure, or nil.
	Query(ctx context.Context, call *Call, q QueryInfo) (queryCtx context.Context, end func(err error))
}

// QueryInfo describes an outbound call for telemetry. It never holds
// values: Statement is SQL with placeholders, a Redis command with "?" for
// its arguments, or an HTTP method and path template.
type QueryInfo struct {
	System    string // postgres, sqlite, mysql, redis, http
	Statement string // "SELECT ... $1", "HGET ? ?", "GET /pets/{petId}"
	Server    string // host:port of an HTTP upstream; "" otherwise
}

type observerKey struct{}

// WithObserver returns ctx with o watching the calls run under it.
func WithObserver(ctx context.Context, o Observer) context.Context {
	return context.WithValue(ctx, observerKey{}, o)
}

// observeStage starts a stage on the context's observer, if any.
func observeStage(ctx context.Context, call *Call, stage Stage) (context.Context, func(error)) {
	if o, ok := ctx.Value(observerKey{}).(Observer); ok {
		return o.Stage(ctx, call, stage)
	}
	return ctx, endNothing
}

// ObserveQuery starts an outbound call on the context's observer, if any.
// Executors outside this package (sources) call it around each request.
func ObserveQuery(ctx context.Context, call *Call, q QueryInfo) (context.Context, func(error)) {
	if o, ok := ctx.Value(observerKey{}).(Observer); ok {
		return o.Query(ctx, call, q)
	}
	return ctx, endNothing
}

func endNothing(error) {}

// PoolStats is a snapshot of a pool of connections (or script runtimes),
// for metrics. Waits and WaitTime count since the pool was opened.
type PoolStats struct {
	Max      int // configured size; 0 when unbounded
	Open     int // open now (in use + idle)
	InUse    int
	Idle     int
	Waits    int64         // acquisitions that had to wait for a free member
	WaitTime time.Duration // total time those acquisitions waited
}

// PoolStatser is implemented by connectors (and any other pool) that can
// report their pool; the metrics expose it per connector.
type PoolStatser interface {
	PoolStats() PoolStats
}

// CacheStats is a snapshot of a result cache, for metrics.
type CacheStats struct {
	Entries   int64
	Evictions uint64 // entries dropped for space or expiry, since the cache was created
}

// CacheStatser is implemented by a result cache that can report itself.
type CacheStatser interface {
	CacheStats() CacheStats
}
