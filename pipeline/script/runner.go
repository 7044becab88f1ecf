package script

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// runner is one goja runtime with the module evaluated and the export in
// hand. It is used by one call at a time.
type runner struct {
	s   *Script
	vm  *goja.Runtime
	fn  goja.Callable
	ctx context.Context // the running call's, for fetch

	logged int // console lines written in this call

	memLeft    int64      // the call's memory budget left (charge)
	rangeError goja.Value // the intrinsic RangeError, for charge

	// jobs hands a call to the runtime's goroutine (serve), which answers
	// on done; state is the running call's: callRunning, then
	// callFinished or callAbandoned (Script.run).
	jobs    chan job
	done    chan error
	state   atomic.Int32
	cleanup runtime.Cleanup // closes jobs when the runner is collected
}

// job is one call handed to a runtime's goroutine.
type job struct {
	r      *runner
	arg    any
	export func(*runner, goja.Value) error
}

// start gives r its goroutine. Every call of the runtime runs there, one
// at a time, for the runtime's life: a goroutine per call starts on a
// small stack and grows it by copying on every call (goja's interpreter
// runs deep), which was about a third of a small handler's CPU. While
// idle the goroutine holds only jobs, never the runner, so a runner
// dropped with its Script (a config reload) is collected and its cleanup
// ends the goroutine; one dropped from the pool ends it at once (retire).
func (r *runner) start() {
	r.jobs, r.done = make(chan job), make(chan error, 1)
	go serve(r.jobs)
	r.cleanup = runtime.AddCleanup(r, func(jobs chan job) { close(jobs) }, r.jobs)
}

// retire ends the goroutine of a runtime that will not be used again; a
// call still running there (an abandoned one) finishes first.
func (r *runner) retire() {
	r.cleanup.Stop()
	close(r.jobs)
}

// serve runs the calls sent on jobs until it is closed or a call is
// abandoned (its runtime is never used again).
func serve(jobs chan job) {
	for serveOne(jobs) {
	}
}

// serveOne waits for one call and runs it. A frame of its own per call:
// while waiting, nothing on this goroutine's stack points at a runner.
func serveOne(jobs chan job) bool {
	j, ok := <-jobs
	if !ok {
		return false
	}
	return j.r.s.invokeAsync(j.r, j.arg, j.export)
}

// newRunner creates a runtime with the sandbox's globals, evaluates the
// module under the time limit, freezes the built-ins (lockdown) and
// finds the export.
func (s *Script) newRunner() (r *runner, err error) {
	vm := goja.New()
	vm.SetMaxCallStackSize(s.opts.MaxCallDepth)
	r = &runner{s: s, vm: vm, ctx: context.Background()}
	r.installConsole()
	if err := r.installLimits(); err != nil {
		return nil, fmt.Errorf("script %s: sandbox setup: %v", s.prog.file, err)
	}
	if s.fetch != nil {
		r.installFetch()
	}
	// A frozen global object: what one call assigns to a global can never
	// be seen by the next caller on this runtime (strict code gets a
	// TypeError, sloppy code's write is dropped).
	if _, err := vm.RunString(`Object.freeze(globalThis);`); err != nil {
		return nil, fmt.Errorf("script %s: sandbox setup: %v", s.prog.file, err)
	}

	timer := time.AfterFunc(s.opts.Timeout, func() { vm.Interrupt(errTimedOut) })
	defer timer.Stop()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("script %s: evaluating the module: %v", s.prog.file, p)
		}
	}()
	wrapper, err := vm.RunProgram(s.prog.prog)
	if err != nil {
		return nil, fmt.Errorf("script %s: %v", s.prog.file, err)
	}
	wrap, _ := goja.AssertFunction(wrapper)
	module := vm.NewObject()
	exports := vm.NewObject()
	_ = module.Set("exports", exports)
	noRequire := vm.ToValue(func(call goja.FunctionCall) goja.Value {
		panic(vm.NewTypeError(fmt.Sprintf("require(%s): modules are bundled when the configuration loads; there is no require at run time", call.Argument(0))))
	})
	if _, err := wrap(goja.Undefined(), exports, noRequire, module); err != nil {
		if e := s.classify(r, err); e != nil {
			return nil, fmt.Errorf("script %s: evaluating the module: %v", s.prog.file, e.(*Error).Message)
		}
	}
	if !timer.Stop() {
		return nil, fmt.Errorf("script %s: evaluating the module took longer than %s", s.prog.file, s.opts.Timeout)
	}
	if err := r.lockdown(); err != nil {
		return nil, fmt.Errorf("script %s: freezing the built-ins after the module loaded: %v", s.prog.file, err)
	}
	fn, err := r.findExport(module.Get("exports"))
	if err != nil {
		return nil, err
	}
	r.fn = fn
	r.start()
	return r, nil
}

// findExport returns the named export. A CommonJS file that assigns a
// function to module.exports serves as its own default export.
func (r *runner) findExport(exports goja.Value) (goja.Callable, error) {
	name := r.s.export
	obj, ok := exports.(*goja.Object)
	if !ok {
		return nil, fmt.Errorf("script %s: the module exports nothing", r.s.prog.file)
	}
	if v := obj.Get(name); v != nil && !goja.IsUndefined(v) {
		if fn, ok := goja.AssertFunction(v); ok {
			return fn, nil
		}
		return nil, fmt.Errorf("script %s: export %q is not a function (it is %s)", r.s.prog.file, name, typeOf(v))
	}
	if name == "default" {
		if fn, ok := goja.AssertFunction(obj); ok {
			return fn, nil
		}
	}
	have := obj.Keys()
	sort.Strings(have)
	if len(have) == 0 {
		return nil, fmt.Errorf("script %s: no export %q (the module exports nothing; write `export default function (...)`)", r.s.prog.file, name)
	}
	return nil, fmt.Errorf("script %s: no export %q (it exports: %s)", r.s.prog.file, name, strings.Join(have, ", "))
}

// begin and end bracket one call.
func (r *runner) begin(ctx context.Context) {
	r.ctx, r.logged, r.memLeft = ctx, 0, r.s.opts.MaxMemory
}
func (r *runner) end() { r.ctx = context.Background() }

func typeOf(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	}
	if obj, ok := v.(*goja.Object); ok {
		if obj.ClassName() == "Array" {
			return "an array"
		}
		return "an object"
	}
	switch v.Export().(type) {
	case int64, float64:
		return "a number"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a " + v.ExportType().String()
}
