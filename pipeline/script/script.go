package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// Defaults of Options.
const (
	DefaultTimeout      = time.Second
	DefaultMaxInput     = 1 << 20
	DefaultMaxOutput    = 1 << 20
	DefaultMaxCallDepth = 1000
	DefaultFetchTimeout = 5 * time.Second
	DefaultFetchMax     = 1 << 20
	DefaultMaxMemory    = 64 << 20
)

// Options are the limits and capabilities of one Script.
type Options struct {
	// Name identifies the script's user in logs (the tool name).
	Name string
	// Timeout bounds one call, module evaluation included (default 1s).
	Timeout time.Duration
	// TimeoutSetting names the setting that sets Timeout, for the message
	// of a call that hits it (default "script_timeout").
	TimeoutSetting string
	// MaxInput and MaxOutput bound the JSON size of the argument and of
	// the return value in bytes (default 1 MiB each).
	MaxInput, MaxOutput int
	// MaxCallDepth bounds the JavaScript call stack (default 1000).
	MaxCallDepth int
	// MaxRuntimes bounds the runtimes of this script, and so the calls
	// running at once; further calls wait (default 4 × GOMAXPROCS).
	MaxRuntimes int
	// MaxAbandoned bounds the runtimes still running a call that already
	// returned at its limit (a native operation goja cannot interrupt, see
	// run); at the bound, further calls fail at once with KindBusy
	// (default MaxRuntimes).
	MaxAbandoned int
	// MaxMemory is the budget of one call for the builtins that can
	// allocate much from a small expression (String.prototype.repeat,
	// Array.prototype.join, typed arrays...; limitsProgram lists them), in
	// bytes (default 64 MiB).
	MaxMemory int64
	// MemorySetting names the setting that sets MaxMemory, for messages
	// (default "script_max_memory").
	MemorySetting string
	// FetchAllow lists the hosts fetch() may reach: "api.example.com",
	// "*.internal.example" (any subdomain), "127.0.0.1:8080" (that port
	// only). Empty: there is no fetch.
	FetchAllow []string
	// FetchTimeout bounds one fetch (default 5s, never beyond the call's
	// own deadline); FetchMaxBytes bounds a response body (default 1 MiB).
	FetchTimeout  time.Duration
	FetchMaxBytes int64
	// Logger receives console.* output with the script's name; nil
	// discards it.
	Logger *slog.Logger
}

func (o *Options) setDefaults() {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.TimeoutSetting == "" {
		o.TimeoutSetting = "script_timeout"
	}
	if o.MaxInput <= 0 {
		o.MaxInput = DefaultMaxInput
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.MaxCallDepth <= 0 {
		o.MaxCallDepth = DefaultMaxCallDepth
	}
	if o.MaxRuntimes <= 0 {
		o.MaxRuntimes = 4 * runtime.GOMAXPROCS(0)
	}
	if o.MaxAbandoned <= 0 {
		o.MaxAbandoned = o.MaxRuntimes
	}
	if o.MaxMemory <= 0 {
		o.MaxMemory = DefaultMaxMemory
	}
	if o.MemorySetting == "" {
		o.MemorySetting = "script_max_memory"
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = DefaultFetchTimeout
	}
	if o.FetchMaxBytes <= 0 {
		o.FetchMaxBytes = DefaultFetchMax
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Script is one exported function of one compiled file, ready to call.
// It is safe for concurrent use: each call borrows a runtime of its own
// from a bounded pool.
type Script struct {
	prog   *program
	export string
	opts   Options
	fetch  *fetcher

	slots chan struct{} // one token per running call: bounds concurrency
	idle  chan *runner  // clean runtimes ready for the next call
	stats poolCounters  // waits, for PoolStats

	// abandoned counts the runtimes left running by calls that returned
	// at their limit (now, and since the Script was loaded).
	abandoned, abandonedTotal atomic.Int64
}

func newScript(p *program, export string, opts Options) *Script {
	opts.setDefaults()
	s := &Script{
		prog: p, export: export, opts: opts,
		slots: make(chan struct{}, opts.MaxRuntimes),
		idle:  make(chan *runner, opts.MaxRuntimes),
	}
	if len(opts.FetchAllow) > 0 {
		s.fetch = newFetcher(opts.FetchAllow, opts.FetchTimeout, opts.FetchMaxBytes)
	}
	return s
}

// File is the script's file as configured; Export the function's name.
func (s *Script) File() string   { return s.prog.file }
func (s *Script) Export() string { return s.export }

// Timeout is the time limit of one call.
func (s *Script) Timeout() time.Duration { return s.opts.Timeout }

// Call runs the function with arg (JSON-like Go data, see the package
// doc) and returns its result as JSON text, object keys in the order the
// script wrote them. A returned promise is awaited. Failures are *Error.
func (s *Script) Call(ctx context.Context, arg any) (json.RawMessage, error) {
	var out json.RawMessage
	err := s.run(ctx, arg, func(r *runner, v goja.Value) error {
		b, err := r.toJSON(v, s.opts.MaxOutput)
		out = b
		return err
	})
	return out, err
}

// CallValue is Call with the result decoded into generic Go values (maps,
// slices, string, bool, nil and json.Number, which keeps big integers
// exact).
func (s *Script) CallValue(ctx context.Context, arg any) (any, error) {
	raw, err := s.Call(ctx, arg)
	if err != nil {
		return nil, err
	}
	return decodeJSON(raw)
}

// run borrows a runtime, calls the function with arg under the time limit,
// settles a returned promise and hands the value to export, all before
// the limit is lifted (export runs JavaScript too: toJSON methods).
//
// The script runs in a goroutine of its own. goja's Interrupt is seen
// between JavaScript instructions only: a native operation (a regular
// expression that backtracks, a builtin looping over a huge array) runs
// on until it ends. So at the limit the call returns its error at once
// and the runtime is abandoned: never reused, its goroutine ends on its
// own (after abandonGrace: a script in a JavaScript loop stops within
// it). Abandoned runtimes still running are bounded by MaxAbandoned.
func (s *Script) run(ctx context.Context, arg any, export func(*runner, goja.Value) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	if n := s.abandoned.Load(); n >= int64(s.opts.MaxAbandoned) {
		return &Error{Kind: KindBusy, Message: fmt.Sprintf("busy: %d runtimes of this script are still stuck in earlier calls that hit their limit; try again later", n)}
	}
	r, err := s.acquire(ctx)
	if err != nil {
		return err
	}

	r.begin(ctx)
	// The call's state and result channel are the runner's: a runtime is
	// reused only after its goroutine has answered (an abandoned one never
	// is), so no two calls ever share them.
	r.state.Store(callRunning)
	r.jobs <- job{r: r, arg: arg, export: export}
	abandoned, interrupted, err := s.await(ctx, r)
	if abandoned {
		return err
	}
	r.end()
	// A limit that fired after the script finished still leaves the
	// interrupt flag set: such a runtime is never reused. A plain throw
	// leaves the runtime as sound as a return does, and is what an auth
	// script or a mapper answers to bad input: dropping the runtime would
	// make every refusal pay a module evaluation (~1 ms instead of ~30 µs).
	var se *Error
	thrown := errors.As(err, &se) && se.Kind == KindThrown
	s.release(r, (err == nil || thrown) && !interrupted)
	return err
}

// invokeAsync runs a call on the runtime's goroutine (serve): invoke,
// then the answer on r.done; false when the caller has abandoned the
// runtime meanwhile.
func (s *Script) invokeAsync(r *runner, arg any, export func(*runner, goja.Value) error) bool {
	err := s.invoke(r, arg, export)
	if err != nil {
		// Still under the limit: reading a thrown object's message may
		// run a getter.
		err = s.classify(r, err)
	}
	if !r.state.CompareAndSwap(callRunning, callFinished) {
		s.abandoned.Add(-1) // the caller has had its answer
		return false
	}
	r.done <- err
	return true
}

// await waits for the call's goroutine, or for the limit (ctx's
// deadline, the time limit or an earlier one of the caller's, or its
// cancellation): then the script is interrupted, and past abandonGrace
// the runtime is abandoned and the limit's error returned. interrupted:
// the runtime's interrupt flag was set.
func (s *Script) await(ctx context.Context, r *runner) (abandoned, interrupted bool, err error) {
	select {
	case err = <-r.done:
		return false, false, err
	case <-ctx.Done():
	}
	r.vm.Interrupt(ctx.Err())
	// JavaScript sees the interrupt at its next instruction: a script in
	// a plain loop ends at once and its runtime is not abandoned.
	grace := time.NewTimer(abandonGrace)
	defer grace.Stop()
	select {
	case err = <-r.done:
		return false, true, err
	case <-grace.C:
	}
	s.abandoned.Add(1) // before the goroutine can take it back
	if !r.state.CompareAndSwap(callRunning, callAbandoned) {
		s.abandoned.Add(-1)
		return false, true, <-r.done
	}
	s.abandonedTotal.Add(1)
	s.release(r, false)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true, true, &Error{Kind: KindTimeout, Message: s.timeoutMessage()}
	}
	return true, true, &Error{Kind: KindCancelled, Message: "call cancelled"}
}

// abandonGrace is how long a call that reached its limit waits for the
// interrupted script to stop before abandoning its runtime.
const abandonGrace = 50 * time.Millisecond

// States of a call's goroutine (run).
const (
	callRunning int32 = iota
	callFinished
	callAbandoned
)

func (s *Script) timeoutMessage() string {
	return fmt.Sprintf("timed out after %s (%s)", s.opts.Timeout, s.opts.TimeoutSetting)
}

func (s *Script) invoke(r *runner, arg any, export func(*runner, goja.Value) error) (err error) {
	defer func() {
		// goja reports some failures (an interrupt inside a native
		// function, a Go panic in a callback) by panicking.
		if p := recover(); p != nil {
			if e, ok := p.(error); ok {
				err = e
				return
			}
			err = fmt.Errorf("script runtime panic: %v", p)
		}
	}()
	in, err := r.toJS(arg, s.opts.MaxInput)
	if err != nil {
		return err
	}
	v, err := r.fn(goja.Undefined(), in)
	if err != nil {
		return err
	}
	// Only a promise is exported: Export of any other object copies it
	// whole into Go maps (and runs its getters).
	if obj, ok := v.(*goja.Object); ok && obj.ExportType() == promiseType {
		p := obj.Export().(*goja.Promise)
		switch p.State() {
		case goja.PromiseStateFulfilled:
			v = p.Result()
		case goja.PromiseStateRejected:
			return rejection{p.Result()}
		default:
			return &Error{Kind: KindThrown, Message: "the returned promise never settled (scripts have no timers or background I/O)"}
		}
		if v == nil {
			v = goja.Undefined()
		}
	}
	return export(r, v)
}

// promiseType is the export type of a promise object.
var promiseType = reflect.TypeFor[*goja.Promise]()

// acquire takes a concurrency slot and a clean runtime, waiting no longer
// than the call's own time limit.
func (s *Script) acquire(ctx context.Context) (*runner, error) {
	select {
	case s.slots <- struct{}{}:
	default:
		if err := s.waitSlot(ctx); err != nil {
			return nil, err
		}
	}
	select {
	case r := <-s.idle:
		return r, nil
	default:
	}
	r, err := s.newRunner()
	if err != nil {
		<-s.slots
		return nil, err
	}
	return r, nil
}

// waitSlot waits for a concurrency slot when all are taken, counting the
// wait for the pool metrics.
func (s *Script) waitSlot(ctx context.Context) error {
	defer s.stats.wait()()
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &Error{Kind: KindTimeout, Message: fmt.Sprintf("timed out after %s waiting for a free script runtime (all %d busy)", s.opts.Timeout, s.opts.MaxRuntimes)}
		}
		return &Error{Kind: KindCancelled, Message: "call cancelled"}
	}
}

// release gives the slot back and the runtime too when it is clean; a
// runtime that failed, timed out or may still be interrupted is dropped.
func (s *Script) release(r *runner, clean bool) {
	if r != nil {
		kept := false
		if clean {
			select {
			case s.idle <- r:
				kept = true
			default:
			}
		}
		if !kept {
			r.retire()
		}
	}
	<-s.slots
}
