package script

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
)

// TestPrototypePollutionDoesNotLeak: what one call does to the built-ins
// (a property on Object.prototype, a replaced JSON.stringify or
// Array.prototype.map) is refused, so the next call on the same runtime
// sees the originals. Strict (ESM) code gets a TypeError, sloppy code's
// write is dropped.
func TestPrototypePollutionDoesNotLeak(t *testing.T) {
	const body = `
		if (mode === 'pollute') {
			const errs = [];
			const tryIt = (f) => { try { f() } catch (e) { errs.push(e.name) } };
			tryIt(() => { Object.prototype.polluted = 1 });
			tryIt(() => { JSON.stringify = () => 'hacked' });
			tryIt(() => { Array.prototype.map = null });
			tryIt(() => { Object.getPrototypeOf([][Symbol.iterator]()).next = null });
			tryIt(() => { Object.defineProperty(String.prototype, 'trim', {value: () => 'x'}) });
			return errs;
		}
		return [({}).polluted === undefined, JSON.stringify({a: 1}), [1, 2].map(x => x * 2), [...[3]], ' a '.trim()];`
	dir := files(t, map[string]string{
		"strict.js": "export default ({mode}) => {" + body + "}",
		"sloppy.js": "module.exports = function ({mode}) {" + body + "}",
	})
	for file, pollute := range map[string]string{
		"strict.js": `["TypeError","TypeError","TypeError","TypeError","TypeError"]`,
		"sloppy.js": `["TypeError"]`, // only defineProperty throws in sloppy code
	} {
		s := mustLoad(t, filepath.Join(dir, file), Options{MaxRuntimes: 1})
		if got := call(t, s, map[string]any{"mode": "pollute"}); got != pollute {
			t.Errorf("%s pollute: %s, want %s", file, got, pollute)
		}
		if got, want := call(t, s, map[string]any{"mode": "read"}), `[true,"{\"a\":1}",[2,4],[3],"a"]`; got != want {
			t.Errorf("%s next call: %s, want %s", file, got, want)
		}
		if st := s.PoolStats(); st.Idle != 1 {
			t.Errorf("%s: %+v, want the same runtime reused", file, st)
		}
	}
}

// TestFrozenBuiltinsStillOverridable: assignments that shadow a built-in
// method or an Error's name on an object of the script's own still work
// (frozen prototypes would refuse them), and a module-level cache is kept
// between the calls a runtime serves.
func TestFrozenBuiltinsStillOverridable(t *testing.T) {
	dir := files(t, map[string]string{"o.js": `
		const cache = new Map();
		export default ({key}) => {
			const e = new Error('bad input'); e.name = 'ValidationError';
			const o = {}; o.toString = () => 'custom';
			function P() {} P.prototype.toString = function () { return 'P' };
			const hits = cache.get(key) ?? 0; cache.set(key, hits + 1);
			return [String(e), String(o), String(new P()), hits, Object.keys(o)];
		}`})
	s := mustLoad(t, filepath.Join(dir, "o.js"), Options{MaxRuntimes: 1})
	call(t, s, map[string]any{"key": "k"})
	if got, want := call(t, s, map[string]any{"key": "k"}), `["ValidationError: bad input","custom","P",1,["toString"]]`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestProtoKeyInInput: an input key "__proto__" is an own property, as
// JSON.parse makes it, never the object's prototype.
func TestProtoKeyInInput(t *testing.T) {
	dir := files(t, map[string]string{"p.js": `export default (input) => [
		Object.prototype.hasOwnProperty.call(input, '__proto__'),
		Object.getPrototypeOf(input) === Object.prototype,
		input.polluted === undefined, ({}).polluted === undefined,
		input.__proto__, Object.keys(input),
		Object.getPrototypeOf(input.rows[0]) === Object.prototype, input.rows[0].__proto__,
	]`})
	s := mustLoad(t, filepath.Join(dir, "p.js"), Options{})
	want := `[true,true,true,true,{"polluted":1},["__proto__","rows"],true,"x"]`
	rows := &pipeline.Rows{Columns: []string{"__proto__"}, Values: [][]any{{"x"}}}
	for _, in := range []any{
		map[string]any{"__proto__": map[string]any{"polluted": 1}, "rows": rows},
		map[string]any{"__proto__": json.RawMessage(`{"polluted": 1}`), "rows": rows},
	} {
		if got := call(t, s, in); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}
