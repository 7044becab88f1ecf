package script

import (
	"errors"
	"fmt"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"

	"github.com/edgemcp/edgemcp/pipeline"
)

// RegexMatchTimeout bounds one match of a regular expression that goja
// runs on its backtracking engine (regexp2: patterns with backreferences
// or lookaround). goja offers no setting of its own, so this is regexp2's
// process-wide default, set when this package is loaded (the other user
// of regexp2 in a Caddy build, chroma's highlighting, sets its own timeout
// on every pattern it compiles). A match that
// runs longer stops and counts as no match. The call itself returns at
// its time limit in any case (Script.run); this bound is what ends the
// goroutine of a runtime abandoned in such a match, which goja's
// Interrupt does not reach. Only a script whose script_timeout is longer
// than this could see a catastrophic match answer "no match".
const RegexMatchTimeout = 5 * time.Second

func init() { regexp2.DefaultMatchTimeout = RegexMatchTimeout }

// The memory budget of a call (Options.MaxMemory, script_max_memory):
// goja has no allocation hook, so the builtins that turn a short
// expression into a large allocation are wrapped, on every runtime before
// the module runs, to charge their result to the budget first:
//
//	String.prototype.repeat, padStart, padEnd   the result's characters
//	Array.prototype.join (so toString, String(array), array + "")
//	                                            each part and separator, 8 bytes per element
//	Array.prototype.fill                        16 bytes per element written
//	Array.from                                  16 bytes per element of an array-like
//	new ArrayBuffer, new Int8Array … BigUint64Array
//	                                            the buffer's bytes
//
// A call over its budget gets a RangeError (a script may catch it; the
// budget stays spent). Not charged: string concatenation (+, template
// literals, concat), the spread of a huge sparse array, JSON.stringify,
// replace with large replacements, a typed array's join, objects and
// arrays built element by element. Those stop at the time limit only (README, Scripts).
var limitsProgram = goja.MustCompile("limits.js", `(function (charge) {
'use strict';
const apply = Reflect.apply, construct = Reflect.construct, defineProperty = Object.defineProperty;
const trunc = Math.trunc, isFinite = Number.isFinite, MAX = 2 ** 53 - 1;
const toInt = (v) => { const n = trunc(+v); return n !== n ? 0 : n; };
const toLength = (v) => { const n = toInt(v); return n <= 0 ? 0 : n > MAX ? MAX : n; };
const str = (v) => `+"`${v}`"+`;
const put = (obj, name, value) => defineProperty(obj, name, {value, writable: true, enumerable: false, configurable: true});
const S = String.prototype, A = Array.prototype;
const repeat = S.repeat, padStart = S.padStart, padEnd = S.padEnd, join = A.join, fill = A.fill, from = Array.from;

put(S, 'repeat', {repeat(count) {
	if (this == null) return apply(repeat, this, []);
	const s = str(this), n = toInt(count);
	if (n > 0 && isFinite(n)) charge(s.length * n, 'String.prototype.repeat');
	return apply(repeat, s, [n]);
}}.repeat);
const pad = (orig, name) => function (maxLength) {
	if (this == null) return apply(orig, this, []);
	const s = str(this), n = toLength(maxLength), f = arguments.length > 1 && arguments[1] !== undefined ? str(arguments[1]) : undefined;
	if (n > s.length && f !== '') charge(n, name);
	return apply(orig, s, [n, f]);
};
const padS = pad(padStart, 'String.prototype.padStart'), padE = pad(padEnd, 'String.prototype.padEnd');
put(S, 'padStart', {padStart(maxLength) { return apply(padS, this, arguments); }}.padStart);
put(S, 'padEnd', {padEnd(maxLength) { return apply(padE, this, arguments); }}.padEnd);

const joining = [];
put(A, 'join', {join(separator) {
	if (this == null) return apply(join, this, []);
	const O = Object(this);
	for (let i = 0; i < joining.length; i++) if (joining[i] === O) return '';
	const len = toLength(O.length), sep = separator === undefined ? ',' : str(separator);
	joining[joining.length] = O;
	try {
		// The separators and a slot per element first, so that a huge
		// sparse array fails at once; then each part.
		charge(len * (sep.length + 8), 'Array.prototype.join');
		const parts = [];
		let owed = 0;
		for (let k = 0; k < len; k++) {
			const e = O[k], t = e == null ? '' : str(e);
			owed += t.length;
			if (owed > 65536) { charge(owed, 'Array.prototype.join'); owed = 0; }
			parts[k] = t;
		}
		if (owed > 0) charge(owed, 'Array.prototype.join');
		return apply(join, parts, [sep]);
	} finally {
		joining.length--;
	}
}}.join);
put(A, 'fill', {fill(value) {
	if (this == null) return apply(fill, this, arguments);
	const O = Object(this), len = toLength(O.length);
	const at = (v, d) => { if (v === undefined) return d; const n = toInt(v); return n < 0 ? (len + n > 0 ? len + n : 0) : (n < len ? n : len); };
	const start = at(arguments[1], 0), end = at(arguments[2], len);
	if (end > start) charge((end - start) * 16, 'Array.prototype.fill');
	return apply(fill, O, [value, start, end]);
}}.fill);
put(Array, 'from', {from(items) {
	if (items != null && items.length !== undefined) charge(toLength(items.length) * 16, 'Array.from');
	return apply(from, this, arguments);
}}.from);

const AB = ArrayBuffer, SAB = typeof SharedArrayBuffer === 'function' ? SharedArrayBuffer : undefined;
const setPrototypeOf = Object.setPrototypeOf, getPrototypeOf = Object.getPrototypeOf, ownKeys = Reflect.ownKeys,
	getOwn = Object.getOwnPropertyDescriptor;
// guard replaces the constructor C (global and prototype.constructor) by
// a function that charges first; statics and prototype are C's.
const guard = (name, C, size) => {
	const W = function (...args) {
		if (new.target === undefined) return apply(C, undefined, args);
		charge(size(args), 'new ' + name);
		return construct(C, args, new.target === W ? C : new.target);
	};
	for (const k of ownKeys(C)) if (k !== 'prototype' && k !== 'caller' && k !== 'arguments') defineProperty(W, k, getOwn(C, k));
	defineProperty(W, 'prototype', getOwn(C, 'prototype'));
	setPrototypeOf(W, getPrototypeOf(C));
	put(C.prototype, 'constructor', W);
	put(globalThis, name, W);
};
guard('ArrayBuffer', AB, (args) => toLength(args[0]));
for (const name of ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array',
	'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array']) {
	const C = globalThis[name];
	if (typeof C !== 'function') continue;
	const bpe = C.BYTES_PER_ELEMENT;
	guard(name, C, (args) => {
		const a = args[0];
		if (a === null || (typeof a !== 'object' && typeof a !== 'function')) return toLength(a) * bpe;
		if (a instanceof AB || (SAB && a instanceof SAB)) return 0;
		return toLength(a.length) * bpe;
	});
}
})`, true)

// installLimits wraps the allocating builtins of r's runtime (above).
func (r *runner) installLimits() error {
	r.rangeError = r.vm.Get("RangeError")
	r.memLeft = r.s.opts.MaxMemory
	fn, err := r.vm.RunProgram(limitsProgram)
	if err != nil {
		return err
	}
	install, _ := goja.AssertFunction(fn)
	_, err = install(goja.Undefined(), r.vm.ToValue(r.charge))
	return err
}

// charge spends n bytes of the call's memory budget for what, or throws a
// RangeError when the budget cannot pay.
func (r *runner) charge(n float64, what string) {
	if n <= float64(r.memLeft) {
		r.memLeft -= int64(n)
		return
	}
	r.memLeft = 0
	msg := fmt.Sprintf("%s: this call would allocate more than %s (%s)", what, pipeline.SizeText(int64(r.s.opts.MaxMemory)), r.s.opts.MemorySetting)
	e, err := r.vm.New(r.rangeError, r.vm.ToValue(msg))
	if err != nil {
		panic(r.vm.NewGoError(errors.New(msg)))
	}
	panic(e)
}
