package connguard

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// gate is a connector whose queries block until released, so the tests
// can hold connection slots deterministically. The real-database behaviour
// (Postgres pools, pg_sleep, a server that comes up later) is tested end to
// end in caddymodule/dbsafety_test.go; these tests pin the admission rules.
type gate struct {
	release chan struct{}
	running atomic.Int64
	pingErr atomic.Pointer[error]
}

func (g *gate) Dialect() sqltemplate.Dialect { return sqltemplate.Postgres }
func (g *gate) ReadOnly() bool               { return true }
func (g *gate) MaxConns() int                { return 2 }
func (g *gate) Query(ctx context.Context, _ string, _ []any) (*pipeline.Rows, error) {
	g.running.Add(1)
	defer g.running.Add(-1)
	select {
	case <-g.release:
		return &pipeline.Rows{}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
func (g *gate) Ping(context.Context) error {
	if p := g.pingErr.Load(); p != nil {
		return *p
	}
	return nil
}

// waitWaiting waits until n calls wait for a slot of p.
func waitWaiting(t *testing.T, p *Pool, n int64) {
	t.Helper()
	waitCount(t, "calls waiting", p.waiting.Load, n)
}

// waitRunning waits until n queries run on g.
func waitRunning(t *testing.T, g *gate, n int64) {
	t.Helper()
	waitCount(t, "queries running", g.running.Load, n)
}

func waitCount(t *testing.T, what string, load func() int64, n int64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); load() != n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d %s, want %d", load(), what, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func publicText(err error) string {
	var pe *pipeline.PublicError
	if errors.As(err, &pe) {
		return pe.Public
	}
	return ""
}

func TestGuardAdmission(t *testing.T) {
	// The third call fails while both slots are held: the running calls end
	// only when the test releases them, after the third has failed, so its
	// failure cannot come from a freed slot. Without waiting it fails at
	// once (its queue timeout is an hour, far beyond the test's bound);
	// with a queue timeout it fails no sooner than that timeout. Only lower
	// bounds are asserted on time: a busy machine makes things slower, never
	// faster.
	tests := []struct {
		name    string
		opts    Options
		atLeast time.Duration
	}{
		{"no waiting allowed", Options{MaxWaiting: 0, QueueTimeout: time.Hour}, 0},
		{"queue timeout", Options{MaxWaiting: -1, QueueTimeout: 150 * time.Millisecond}, 150 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &gate{release: make(chan struct{})}
			p := NewPool(g, 0, nil)
			if err := p.Start(); err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			c := p.Guard(tt.opts)
			done := make(chan error, 2)
			for range 2 {
				go func() { _, err := c.Query(context.Background(), "", nil); done <- err }()
			}
			waitRunning(t, g, 2)
			start := time.Now()
			third := make(chan error, 1)
			go func() { _, err := c.Query(context.Background(), "", nil); third <- err }()
			select {
			case err := <-third:
				if took := time.Since(start); publicText(err) != MsgBusy || took < tt.atLeast {
					t.Errorf("third call: %v after %s", err, took)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the third call waited for a slot")
			}
			close(g.release)
			for range 2 {
				if err := <-done; err != nil {
					t.Error(err)
				}
			}
			// Slots are given back.
			if _, err := c.Query(context.Background(), "", nil); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestGuardWaiterGetsFreedSlotAndCancel(t *testing.T) {
	g := &gate{release: make(chan struct{})}
	p := NewPool(g, 0, nil)
	defer p.Close()
	c := p.Guard(Options{MaxWaiting: 1, QueueTimeout: 5 * time.Second})
	for range 2 {
		go func() { _, _ = c.Query(context.Background(), "", nil) }()
	}
	waitRunning(t, g, 2)

	// A waiter whose caller goes away stops waiting.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := c.Query(ctx, "", nil); errc <- err }()
	waitWaiting(t, p, 1)
	// One waits already: the next is beyond max_waiting.
	if _, err := c.Query(context.Background(), "", nil); publicText(err) != MsgBusy {
		t.Errorf("beyond max_waiting: %v", err)
	}
	cancel()
	if err := <-errc; publicText(err) != "canceled" {
		t.Errorf("canceled waiter: %v", err)
	}
	if n := p.waiting.Load(); n != 0 {
		t.Errorf("%d waiting after the waiter left", n)
	}

	// A waiter gets the slot a finished call frees.
	go func() { _, err := c.Query(context.Background(), "", nil); errc <- err }()
	waitWaiting(t, p, 1)
	g.release <- struct{}{} // one of the two running calls ends
	waitRunning(t, g, 2)    // the waiter runs
	close(g.release)
	if err := <-errc; err != nil {
		t.Error(err)
	}
}

func TestPoolDownThenUp(t *testing.T) {
	defer func(min, max time.Duration) { backoffMin, backoffMax = min, max }(backoffMin, backoffMax)
	backoffMin, backoffMax = 10*time.Millisecond, 20*time.Millisecond

	g := &gate{release: make(chan struct{})}
	close(g.release)
	down := error(&pipeline.PublicError{Public: "database unavailable", Cause: errors.New("dial tcp 10.0.0.1:5432: connection refused")})
	g.pingErr.Store(&down)
	var events []string
	changes := make(chan bool, 4)
	p := NewPool(g, 0, func(up bool, err error) {
		if err != nil {
			events = append(events, err.Error())
		}
		changes <- up
	})
	defer p.Close()
	if err := p.Start(); err == nil || !strings.Contains(err.Error(), "database unavailable") {
		t.Fatalf("Start: %v", err)
	}
	if <-changes {
		t.Fatal("want a down event")
	}
	c := p.Guard(Options{})
	// While down a call fails without trying the database: the fake's
	// Query would succeed (its gate is open), so an answer other than
	// "unavailable" means the call went through.
	if _, err := c.Query(context.Background(), "", nil); publicText(err) != MsgUnavailable {
		t.Fatalf("down: %v", err)
	}
	if err := p.Check(); err == nil {
		t.Fatal("Check while down succeeded")
	}
	g.pingErr.Store(nil)
	select {
	case up := <-changes:
		if !up {
			t.Fatal("want an up event")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the background retry did not bring the pool up")
	}
	if _, err := c.Query(context.Background(), "", nil); err != nil {
		t.Fatalf("up: %v", err)
	}
	if len(events) != 1 {
		t.Errorf("events: %q", events)
	}
}

func TestPoolCloseStopsRetry(t *testing.T) {
	g := &gate{}
	down := error(errors.New("down"))
	g.pingErr.Store(&down)
	p := NewPool(g, 0, nil)
	_ = p.Start()
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not stop the retry loop")
	}
	p.Close() // idempotent
}
