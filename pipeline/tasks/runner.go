package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Config shapes a Runner.
type Config struct {
	// Prefix is put before every key (default "edgemcp:tasks:"). Nodes
	// that share tasks share it; endpoints that must not, do not.
	Prefix string
	// Node names this node in the leases it holds (default: random).
	Node string
	// Renew is how often the running node renews a task's lease and
	// looks for a cancel (default 2s). A lease lasts leaseRenewals
	// renewals: a task whose node died is failed that long after.
	Renew time.Duration
	// PollInterval is the pace clients are asked to poll at (default 1s).
	PollInterval time.Duration
	// MaxResult bounds a task's result in bytes (the endpoint's
	// max_result_size; default 8 MiB): a larger one fails the task.
	MaxResult int
}

// Defaults of Config.
const (
	defaultPrefix       = "edgemcp:tasks:"
	defaultRenew        = 2 * time.Second
	defaultPollInterval = time.Second
	defaultMaxResult    = 8 << 20
	leaseRenewals       = 3
	// minTTL is the shortest ttl a client's request can set: a task that
	// expires before its first poll serves no one.
	minTTL = time.Second
	// closeWait bounds how long Close waits for the calls it stopped.
	closeWait = 10 * time.Second
)

// Spec says how to run one call as a task.
type Spec struct {
	// Tool is the tool's name (for the record and for operators).
	Tool string
	// Identity is the verified caller; nil for an anonymous one.
	Identity *pipeline.Identity
	// TTL is the tool's ttl: how long the task and its outcome are kept.
	TTL time.Duration
	// Requested is the ttl the client asked for (0: none); a shorter one
	// than TTL is taken.
	Requested time.Duration
}

// Work is the call a task runs. It returns the call's result as the
// client reads it (a complete CallToolResult, encoded), or the error the
// call ended with (a *pipeline.Error keeps its code and message). Its
// context ends when the task is cancelled, runs past its ttl, or the
// node stops.
type Work func(ctx context.Context) (json.RawMessage, error)

// Why a running call's context ended, besides its own failure.
var (
	errCancelled = errors.New("tasks: cancelled")
	errEnded     = errors.New("tasks: the task has an outcome already")
	errExpired   = errors.New("tasks: the task ran past its ttl")
	errStopped   = errors.New("tasks: " + msgStopped)
	errLost      = errors.New("tasks: " + msgLost)
)

// Runner runs calls as tasks and answers for tasks, on this node, over a
// KV it may share with other nodes.
type Runner struct {
	store     *store
	node      string
	renew     time.Duration
	poll      time.Duration
	maxResult int
	mu        sync.Mutex
	running   map[string]*running
	closed    bool
	wg        sync.WaitGroup
}

// running is a call this node runs.
type running struct {
	stop context.CancelCauseFunc
	done chan struct{}
}

// New returns a Runner over kv.
func New(kv KV, cfg Config) *Runner {
	if cfg.Prefix == "" {
		cfg.Prefix = defaultPrefix
	}
	if cfg.Node == "" {
		cfg.Node = newID()
	}
	if cfg.Renew <= 0 {
		cfg.Renew = defaultRenew
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = defaultPollInterval
	}
	if cfg.MaxResult <= 0 {
		cfg.MaxResult = defaultMaxResult
	}
	return &Runner{store: &store{kv: kv, prefix: cfg.Prefix, now: time.Now}, node: cfg.Node, renew: cfg.Renew,
		poll: cfg.PollInterval, maxResult: cfg.MaxResult, running: map[string]*running{}}
}

// lease is how long a lease lasts.
func (r *Runner) lease() time.Duration { return leaseRenewals * r.renew }

// Start makes a task and runs work in the background. It returns once
// the task is kept, so that a tasks/get on any node finds it. The work
// keeps ctx's values (telemetry, the caller) but not its end: the request
// that made the task ends at once.
func (r *Runner) Start(ctx context.Context, spec Spec, work Work) (*pipeline.Task, error) {
	ttl := spec.TTL
	if spec.Requested > 0 && spec.Requested < ttl {
		ttl = max(spec.Requested, minTTL)
	}
	if ttl <= 0 {
		return nil, errors.New("tasks: a task needs a ttl")
	}
	provider := ""
	if spec.Identity != nil {
		provider = spec.Identity.Provider
	}
	id := newID()
	rec := &record{Owner: Owner(spec.Identity), Provider: provider, Tool: spec.Tool, Created: r.store.now(),
		TTL: ttl, Poll: r.poll}

	wctx, expire := context.WithDeadlineCause(context.WithoutCancel(ctx), rec.expires(), errExpired)
	wctx, stop := context.WithCancelCause(wctx)
	run := &running{stop: stop, done: make(chan struct{})}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		stop(nil)
		expire()
		return nil, errStopped
	}
	r.running[id] = run
	r.wg.Add(1)
	r.mu.Unlock()

	if err := r.store.create(ctx, id, rec, r.lease(), r.node); err != nil {
		r.forget(id, run)
		stop(nil)
		expire()
		return nil, err
	}
	go func() {
		defer expire()
		r.run(wctx, id, rec, run, work)
	}()
	return taskOf(id, rec, nil), nil
}

// run runs the call, holding the lease meanwhile, and writes its outcome.
func (r *Runner) run(ctx context.Context, id string, rec *record, run *running, work Work) {
	defer r.forget(id, run)
	held := make(chan struct{})
	go func() {
		defer close(held)
		r.hold(ctx, id, rec, run.stop)
	}()
	result, err := work(ctx)
	cause := context.Cause(ctx)
	run.stop(nil)
	<-held

	end := &outcome{Status: pipeline.TaskCompleted, At: r.store.now(), Result: result}
	switch {
	case errors.Is(cause, errCancelled) || errors.Is(cause, errEnded):
		end = &outcome{Status: pipeline.TaskCancelled, Message: msgCancelled, At: end.At}
	case errors.Is(cause, errExpired):
		// Gone with its ttl: there is nothing left to write to.
		r.store.counts.expired.Add(1)
		return
	case errors.Is(cause, errStopped), errors.Is(cause, errLost):
		msg := cause.Error()[len("tasks: "):]
		end = failure(msg, &pipeline.TaskError{Code: pipeline.CodeStageFailed, Message: string(pipeline.StageExecution) + ": " + msg}, end.At)
	case err != nil:
		e := pipeline.TaskErrorOf(err)
		end = failure(e.Message, e, end.At)
	case len(result) > r.maxResult:
		msg := fmt.Sprintf("the result is larger than max_result_size (%d bytes)", r.maxResult)
		end = failure(msg, &pipeline.TaskError{Code: pipeline.CodeStageFailed, Message: string(pipeline.StageExecution) + ": " + msg}, end.At)
	}
	// The write may find an outcome there already (a cancel, a lapse):
	// that one stands. Its context is the task's values without its end.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.renew)
	defer cancel()
	if _, err := r.store.finish(wctx, id, rec, end); errors.Is(err, ErrFull) {
		msg := fmt.Sprintf("the task store had no room for the result (%d bytes)", len(end.Result))
		_, _ = r.store.finish(wctx, id, rec, failure(msg, &pipeline.TaskError{Code: pipeline.CodeStageFailed,
			Message: string(pipeline.StageExecution) + ": " + msg}, end.At))
	}
}

func failure(msg string, e *pipeline.TaskError, at time.Time) *outcome {
	return &outcome{Status: pipeline.TaskFailed, Message: msg, At: at, Error: e}
}

// hold renews the lease until ctx ends, and stops the call when the task
// got an outcome elsewhere (a cancel on any node), or when the lease
// could not be renewed for as long as it lasts: other nodes may have
// given the task up by then.
func (r *Runner) hold(ctx context.Context, id string, rec *record, stop context.CancelCauseFunc) {
	tick := time.NewTicker(r.renew)
	defer tick.Stop()
	heldAt := r.store.now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.renew)
		ended, err := r.store.renew(kctx, id, rec, r.lease(), r.node)
		cancel()
		switch {
		case err == nil && ended:
			stop(errEnded)
			return
		case err == nil:
			heldAt = r.store.now()
		case r.store.now().Sub(heldAt) >= r.lease():
			stop(errLost)
			return
		}
	}
}

func (r *Runner) forget(id string, run *running) {
	r.mu.Lock()
	if r.running[id] == run {
		delete(r.running, id)
		close(run.done)
		r.wg.Done()
	}
	r.mu.Unlock()
}

// Get returns the task id as it is now, for the caller who verifies
// (ErrNotFound for any other).
func (r *Runner) Get(ctx context.Context, id string, who Who) (*pipeline.Task, error) {
	return r.store.load(ctx, id, who)
}

// Await returns the task once it has ended (2025-11-25's tasks/result
// waits so), or ctx's error. It polls the store at the task's poll
// interval, and wakes at once when the call ends on this node.
func (r *Runner) Await(ctx context.Context, id string, who Who) (*pipeline.Task, error) {
	for {
		// The call this node runs is looked up before the task is read:
		// one that ends after the read closes done, and one that ended
		// before it (forget follows its outcome) reads as ended. Looked up
		// after, a call ending in between would leave Await asleep for a
		// whole poll interval.
		r.mu.Lock()
		run := r.running[id]
		r.mu.Unlock()
		t, err := r.store.load(ctx, id, who)
		if err != nil || t.Status.Terminal() {
			return t, err
		}
		var done <-chan struct{}
		if run != nil {
			done = run.done
		}
		wait := time.NewTimer(max(t.PollInterval, 10*time.Millisecond))
		select {
		case <-ctx.Done():
			wait.Stop()
			return nil, ctx.Err()
		case <-done:
			wait.Stop()
		case <-wait.C:
		}
	}
}

// ErrTerminal is a cancel of a task that has ended: 2025-11-25 refuses it
// (-32602), 2026-07-28 acknowledges it and the task keeps its outcome.
var ErrTerminal = errors.New("the task has already ended")

// Cancel cancels the task id for the caller who verifies: its outcome is
// written cancelled, and the node running the call stops it (at once when
// that is this node, at its next lease renewal else). It returns the task
// as it is after, with ErrTerminal when it had ended already.
func (r *Runner) Cancel(ctx context.Context, id string, who Who) (*pipeline.Task, error) {
	t, err := r.store.load(ctx, id, who)
	if err != nil {
		return nil, err
	}
	if t.Status.Terminal() {
		return t, ErrTerminal
	}
	rec, err := r.store.record(ctx, id)
	if err != nil {
		return nil, err
	}
	won, err := r.store.finish(ctx, id, rec, &outcome{Status: pipeline.TaskCancelled, Message: msgCancelled, At: r.store.now()})
	if err != nil {
		return nil, err
	}
	if won {
		r.mu.Lock()
		run := r.running[id]
		r.mu.Unlock()
		if run != nil {
			run.stop(errCancelled)
		}
	}
	t, err = r.store.load(ctx, id, who)
	if err == nil && !won {
		err = ErrTerminal // it ended between the two reads
	}
	return t, err
}

// Close stops every call this node runs, which end failed ("the gateway
// node running it shut down"), and waits a while for them; Start refuses
// new tasks after. Tasks on other nodes are untouched.
func (r *Runner) Close() {
	r.mu.Lock()
	r.closed = true
	for _, run := range r.running {
		run.stop(errStopped)
	}
	r.mu.Unlock()
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(closeWait):
	}
}

// Stats are a node's task metrics: made here, running here, and the
// outcomes this node wrote (each task's outcome is written by one node).
// Expired counts calls stopped by their ttl, which end failed.
type Stats struct {
	Created, Running, Completed, Failed, Cancelled, Expired int64
}

// Stats returns the counters.
func (r *Runner) Stats() Stats {
	r.mu.Lock()
	n := len(r.running)
	r.mu.Unlock()
	c := &r.store.counts
	return Stats{Created: c.created.Load(), Running: int64(n), Completed: c.completed.Load(),
		Failed: c.failed.Load(), Cancelled: c.cancelled.Load(), Expired: c.expired.Load()}
}
