package script

import (
	"context"
	"fmt"
	"sort"
	"strings"
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
