package script

import "github.com/dop251/goja"

// lockdownProgram freezes the intrinsics of a runtime once its module has
// been evaluated, so that what one call does to them (Object.prototype.x
// = ..., JSON.stringify = ...) cannot reach the next caller served by the
// same runtime. The module's own top level runs before, free to patch
// (a polyfill); its module-level variables are not frozen: a module-level
// cache is shared by the calls one runtime serves (README, Scripts).
//
// Everything reachable from the global object is frozen (values,
// accessors, prototypes), plus the intrinsics only reachable from
// instances (iterator and generator prototypes...).
//
// Freezing a prototype makes its data properties non-writable, and
// JavaScript then refuses an assignment of the same name on an object
// that inherits it (`err.name = 'ValidationError'` on an Error). The
// properties scripts commonly assign that way become accessors that
// define the property on the object assigned to, as an assignment would
// have.
var lockdownProgram = goja.MustCompile("lockdown.js", `(function () {
'use strict';
const freeze = Object.freeze, getProto = Object.getPrototypeOf, ownKeys = Reflect.ownKeys,
	getOwn = Object.getOwnPropertyDescriptor, defineProperty = Object.defineProperty;

const overridable = (obj, names) => {
	for (const name of names) {
		const d = getOwn(obj, name);
		if (!d || !('value' in d) || !d.writable) continue;
		const value = d.value;
		defineProperty(obj, name, {
			get: {[name]() { return value; }}[name],
			set: {[name](v) {
				if (this === obj) throw new TypeError('Cannot assign to ' + String(name) + ': built-in prototypes are frozen');
				if (this === null || (typeof this !== 'object' && typeof this !== 'function')) return;
				defineProperty(this, name, {value: v, writable: true, enumerable: true, configurable: true});
			}}[name],
			enumerable: d.enumerable, configurable: false,
		});
	}
};
overridable(Object.prototype, ['constructor', 'toString', 'toLocaleString', 'valueOf']);
overridable(Function.prototype, ['constructor', 'toString']);
overridable(Array.prototype, ['constructor', 'toString']);
for (const E of [Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError,
	typeof AggregateError === 'function' ? AggregateError : Error]) {
	overridable(E.prototype, ['constructor', 'name', 'message', 'toString']);
}

const roots = [globalThis];
const root = (f) => { try { roots.push(f()); } catch (e) { /* not in this engine */ } };
root(() => getProto([][Symbol.iterator]()));
root(() => getProto(''[Symbol.iterator]()));
root(() => getProto(new Map()[Symbol.iterator]()));
root(() => getProto(new Set()[Symbol.iterator]()));
root(() => getProto(/a/[Symbol.matchAll]('a')));
root(() => getProto(function* () {}));
root(() => getProto(async function () {}));
root(() => getOwn(function () { 'use strict'; return arguments; }(), 'callee').get);

const seen = new Set(), stack = roots;
while (stack.length > 0) {
	const o = stack.pop();
	if (o === null || (typeof o !== 'object' && typeof o !== 'function') || seen.has(o)) continue;
	seen.add(o);
	const p = getProto(o);
	if (p !== null) stack.push(p);
	const keys = ownKeys(o);
	// A built-in method has only its primitive length and name.
	if (typeof o === 'function' && keys.length === 2 && keys[0] === 'length' && keys[1] === 'name') { freeze(o); continue; }
	for (let i = 0; i < keys.length; i++) {
		const d = getOwn(o, keys[i]);
		if (d === undefined) continue;
		const v = d.value;
		if (v !== undefined) {
			if (typeof v === 'object' ? v !== null : typeof v === 'function') stack.push(v);
		} else {
			if (d.get !== undefined) stack.push(d.get);
			if (d.set !== undefined) stack.push(d.set);
		}
	}
	freeze(o);
}
})`, true)

// lockdown freezes r's intrinsics (above).
func (r *runner) lockdown() error {
	fn, err := r.vm.RunProgram(lockdownProgram)
	if err != nil {
		return err
	}
	run, _ := goja.AssertFunction(fn)
	_, err = run(goja.Undefined())
	return err
}
