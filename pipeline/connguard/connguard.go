// Package connguard puts admission control and health in front of any
// pipeline.SQLConnector, so that every connector type behaves the same way
// when its database is busy or away:
//
//   - a call that finds the pool exhausted waits at most QueueTimeout, and
//     at most MaxWaiting calls wait; the others fail at once with
//     "connector busy" instead of piling up behind the database;
//   - a connector whose database did not answer when it was opened fails
//     fast with "connector unavailable" while it retries in the background
//     (with backoff), and serves as soon as the database answers, without
//     a reload. Later outages are the connector's own business: its pool
//     drops dead connections and reconnects.
//
// A Pool lives as long as the connector's pool (it is shared by every
// configuration using it); each configuration gets its own Guard with its
// own limits over the shared slots.
package connguard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// Public messages (what a caller sees after "execution: query failed: ").
const (
	MsgBusy        = "connector busy"
	MsgUnavailable = "connector unavailable"
)

// DefaultQueueTimeout bounds the wait for a connection when no
// queue_timeout is configured: no call waits unboundedly.
const DefaultQueueTimeout = 10 * time.Second

// Pinger is implemented by connectors that can check that their database
// answers (a round trip on a pooled connection). Connectors without it are
// taken as up.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Sizer is implemented by connectors that know their pool size.
type Sizer interface {
	MaxConns() int
}

// Retry timing of a connector that is down.
var (
	pingTimeout = 3 * time.Second
	backoffMin  = 200 * time.Millisecond
	backoffMax  = 5 * time.Second
)

// Pool is the state shared by every configuration using one connector.
type Pool struct {
	conn     pipeline.SQLConnector
	slots    chan struct{} // one per connection; nil when the size is unknown
	waiting  atomic.Int64
	up       atomic.Bool
	onChange func(up bool, err error)

	mu       sync.Mutex // guards retrying and closed
	retrying bool
	closed   bool
	stop     chan struct{}
	done     chan struct{}
}

// NewPool wraps conn. size is the pool size when conn is not a Sizer (0:
// unknown, no admission control). onChange, if set, is told when the
// database stops or starts answering (for logs); err is safe to show.
func NewPool(conn pipeline.SQLConnector, size int, onChange func(up bool, err error)) *Pool {
	if s, ok := conn.(Sizer); ok && s.MaxConns() > 0 {
		size = s.MaxConns()
	}
	p := &Pool{conn: conn, onChange: onChange, stop: make(chan struct{}), done: make(chan struct{})}
	if size > 0 {
		p.slots = make(chan struct{}, size)
	}
	p.up.Store(true)
	return p
}

// Start checks once that the database answers. When it does not, the pool
// is down: its guards answer "connector unavailable" while it retries in
// the background until the database answers or the pool is closed. The
// error is the check's (nil when up), safe to show.
func (p *Pool) Start() error {
	err := p.ping()
	if err == nil {
		return nil
	}
	p.up.Store(false)
	p.notify(false, err)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed && !p.retrying {
		p.retrying = true
		go p.retry()
	}
	return err
}

// Check pings the database now (a `required` connector at load); success
// brings a down pool up at once.
func (p *Pool) Check() error {
	if p.up.Load() {
		return nil
	}
	if err := p.ping(); err != nil {
		return err
	}
	p.markUp()
	return nil
}

// Up reports whether the database answered.
func (p *Pool) Up() bool { return p.up.Load() }

// Close stops the background retry. It does not close the connector.
func (p *Pool) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	retrying := p.retrying
	close(p.stop)
	p.mu.Unlock()
	if retrying {
		<-p.done
	}
}

func (p *Pool) ping() error {
	pg, ok := p.conn.(Pinger)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	if err := pg.Ping(ctx); err != nil {
		return &pipeline.PublicError{Public: pipeline.SafeText(err, "database unavailable"), Cause: err}
	}
	return nil
}

func (p *Pool) retry() {
	defer close(p.done)
	delay := backoffMin
	for !p.up.Load() {
		t := time.NewTimer(delay)
		select {
		case <-p.stop:
			t.Stop()
			return
		case <-t.C:
		}
		if p.ping() == nil {
			p.markUp()
			return
		}
		delay = min(2*delay, backoffMax)
	}
}

func (p *Pool) markUp() {
	if p.up.CompareAndSwap(false, true) {
		p.notify(true, nil)
	}
}

func (p *Pool) notify(up bool, err error) {
	if p.onChange != nil {
		p.onChange(up, err)
	}
}

// Options are one configuration's limits.
type Options struct {
	// MaxWaiting bounds the calls waiting for a slot; negative: no bound.
	MaxWaiting int
	// QueueTimeout bounds each wait; 0 means DefaultQueueTimeout.
	QueueTimeout time.Duration
}

// Guard returns the connector as one configuration sees it.
func (p *Pool) Guard(o Options) *Guard {
	if o.QueueTimeout <= 0 {
		o.QueueTimeout = DefaultQueueTimeout
	}
	return &Guard{pool: p, opts: o}
}

// Guard is a pipeline.SQLConnector that enforces a Pool's health and one
// configuration's admission limits. Safe for concurrent use.
type Guard struct {
	pool *Pool
	opts Options
}

var _ pipeline.SQLConnector = (*Guard)(nil)

func (g *Guard) Dialect() sqltemplate.Dialect { return g.pool.conn.Dialect() }
func (g *Guard) ReadOnly() bool               { return g.pool.conn.ReadOnly() }

// Unwrap returns the guarded connector (for statistics and type checks).
func (g *Guard) Unwrap() pipeline.SQLConnector { return g.pool.conn }

var errDown = errors.New("the database did not answer when the connector was opened; retrying in the background")

// Query runs the statement once a slot is free, or fails with
// "connector busy" or "connector unavailable".
func (g *Guard) Query(ctx context.Context, sql string, args []any) (*pipeline.Rows, error) {
	if err := g.admit(ctx); err != nil {
		return nil, err
	}
	defer g.release()
	return g.pool.conn.Query(ctx, sql, args)
}

// admit takes a slot for one call, or fails with "connector busy" or
// "connector unavailable"; release gives the slot back.
func (g *Guard) admit(ctx context.Context) error {
	if !g.pool.up.Load() {
		return &pipeline.PublicError{Public: MsgUnavailable, Cause: errDown}
	}
	return g.acquire(ctx)
}

func (g *Guard) acquire(ctx context.Context) error {
	slots := g.pool.slots
	if slots == nil {
		return nil
	}
	select {
	case slots <- struct{}{}:
		return nil
	default:
	}
	n := g.pool.waiting.Add(1)
	defer g.pool.waiting.Add(-1)
	if g.opts.MaxWaiting >= 0 && n > int64(g.opts.MaxWaiting) {
		return &pipeline.PublicError{Public: MsgBusy, Cause: fmt.Errorf("all %d connections in use and %d calls waiting (max_waiting %d)", cap(slots), n-1, g.opts.MaxWaiting)}
	}
	t := time.NewTimer(g.opts.QueueTimeout)
	defer t.Stop()
	select {
	case slots <- struct{}{}:
		return nil
	case <-t.C:
		return &pipeline.PublicError{Public: MsgBusy, Cause: fmt.Errorf("no connection free within queue_timeout %s (%d connections)", g.opts.QueueTimeout, cap(slots))}
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &pipeline.PublicError{Public: "timed out", Cause: ctx.Err()}
		}
		return &pipeline.PublicError{Public: "canceled", Cause: ctx.Err()}
	}
}

func (g *Guard) release() {
	if g.pool.slots != nil {
		<-g.pool.slots
	}
}
