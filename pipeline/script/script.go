package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
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
	stats poolCounters  // waits, for PoolStats (stats.go)
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
func (s *Script) run(ctx context.Context, arg any, export func(*runner, goja.Value) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	r, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	clean := false
	defer func() { s.release(r, clean) }()

	r.begin(ctx)
	defer r.end()
	timer := time.AfterFunc(s.opts.Timeout, func() { r.vm.Interrupt(errTimedOut) })
	stop := context.AfterFunc(ctx, func() { r.vm.Interrupt(ctx.Err()) })

	err = s.invoke(r, arg, export)
	if err != nil {
		// Still under the limit: reading a thrown object's message may
		// run a getter.
		err = s.classify(r, err)
	}

	// A limit that fired after the script finished still leaves the
	// interrupt flag set: such a runtime is never reused. A plain throw
	// leaves the runtime as sound as a return does, and is what an auth
	// script or a mapper answers to bad input: dropping the runtime would
	// make every refusal pay a module evaluation (~1 ms instead of ~30 µs).
	timerStopped, ctxStopped := timer.Stop(), stop()
	var se *Error
	thrown := errors.As(err, &se) && se.Kind == KindThrown
	clean = (err == nil || thrown) && timerStopped && ctxStopped
	return err
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
	if p, ok := v.Export().(*goja.Promise); ok {
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
	if r != nil && clean {
		select {
		case s.idle <- r:
		default:
		}
	}
	<-s.slots
}
