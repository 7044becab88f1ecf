package script

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// backtracking is the regular expression: on 24 "a"s and a "!" it
// backtracks for seconds inside one native call, where goja's Interrupt
// is not seen.
// (A handler gets {inputs, ...}, a plain call the argument itself.)
const backtracking = `export default (arg) => /^((a+)+)\2?$/.test((arg.inputs ?? arg).s)`

var slowInput = map[string]any{"s": strings.Repeat("a", 24) + "!"}

// waitLong waits for cond, polling, up to a bound far above the time the
// awaited event needs (the regular expression's RegexMatchTimeout).
func waitLong(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 60s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestNativeWorkReturnsAtLimit: a call stuck in a native operation (the
// backtracking regular expression) returns its timeout error at its limit,
// not when the operation ends; the runtime is abandoned and counted, the
// next call gets a sound runtime, and the abandoned goroutine ends at the
// regular expression's own time bound.
func TestNativeWorkReturnsAtLimit(t *testing.T) {
	dir := files(t, map[string]string{"re.js": backtracking})
	// 1s, not less: the next call below builds a fresh runtime, which
	// under -race on a busy machine has taken over 200ms.
	s := mustLoad(t, filepath.Join(dir, "re.js"), Options{Timeout: time.Second, MaxRuntimes: 2})
	h := Handler{s}
	start := time.Now()
	_, err := h.Execute(context.Background(), &pipeline.Call{Tool: &pipeline.Tool{Name: "re"}, Inputs: slowInput})
	elapsed := time.Since(start)
	var pe *pipeline.Error
	if !errors.As(err, &pe) || pe.Code != pipeline.CodeStageFailed || !strings.Contains(pe.Message, "timed out after 1s (script_timeout)") {
		t.Fatalf("got %v, want the -32000 timeout error", err)
	}
	// The old code returned when the match ended (RegexMatchTimeout, 5s,
	// or the full backtracking without it).
	if elapsed >= RegexMatchTimeout-time.Second {
		t.Errorf("returned after %s, want well before the match ends", elapsed)
	}
	if st := s.AbandonStats(); st.Total != 1 {
		t.Errorf("abandon stats %+v, want one abandonment", st)
	}
	if out := call(t, s, map[string]any{"s": "aaa"}); out != "true" {
		t.Errorf("next call: %s", out)
	}
	if st := s.PoolStats(); st.InUse != 0 || st.Idle != 1 {
		t.Errorf("pool %+v: want the sound runtime back and the abandoned one gone", st)
	}
	waitLong(t, "abandoned runtime ends", func() bool { return s.AbandonStats().Running == 0 })
}

// TestAbandonedCap: while MaxAbandoned runtimes are still stuck, further
// calls fail at once with a busy error instead of adding goroutines; once
// they end, calls run again.
func TestAbandonedCap(t *testing.T) {
	dir := files(t, map[string]string{"re.js": backtracking})
	// One second: far below the match's RegexMatchTimeout, so the first
	// call is abandoned while its match runs on, and far above what a fresh
	// runtime takes to answer "aaa" under -race on a loaded machine (100 ms
	// was not: the last call timed out in CI).
	s := mustLoad(t, filepath.Join(dir, "re.js"), Options{Timeout: time.Second, MaxRuntimes: 4, MaxAbandoned: 1})
	if se := scriptErr(t, callErr(s, slowInput)); se.Kind != KindTimeout {
		t.Fatalf("first call: %+v", se)
	}
	se := scriptErr(t, callErr(s, map[string]any{"s": "aaa"}))
	if se.Kind != KindBusy || !strings.Contains(se.Message, "busy: 1 runtimes") {
		t.Fatalf("at the cap: %+v, want busy", se)
	}
	if st := s.AbandonStats(); st.Total != 1 || st.Running != 1 {
		t.Errorf("abandon stats %+v", st)
	}
	waitLong(t, "abandoned runtime ends", func() bool { return s.AbandonStats().Running == 0 })
	if out := call(t, s, map[string]any{"s": "aaa"}); out != "true" {
		t.Errorf("after the stuck runtime ended: %s", out)
	}
}

// TestInterruptedLoopEnds: a script in a JavaScript loop stops at the
// interrupt, so even when its call gave up waiting (abandonGrace passed on
// a busy machine) its goroutine ends at once and the tool is not left busy.
func TestInterruptedLoopEnds(t *testing.T) {
	dir := files(t, map[string]string{"spin.js": `export default () => { for (;;) {} }`})
	s := mustLoad(t, filepath.Join(dir, "spin.js"), Options{Timeout: 50 * time.Millisecond, MaxAbandoned: 1})
	for i := 0; i < 3; i++ {
		if se := scriptErr(t, callErr(s, nil)); se.Kind != KindTimeout {
			t.Fatalf("call %d: %+v", i, se)
		}
		waitFor(t, func() bool { return s.AbandonStats().Running == 0 })
	}
}

func callErr(s *Script, arg any) error {
	_, err := s.Call(context.Background(), arg)
	return err
}

// TestMemoryBudget: builtins that allocate much from a short expression
// fail with a RangeError naming script_max_memory before they allocate.
func TestMemoryBudget(t *testing.T) {
	for _, expr := range []string{
		`'x'.repeat(2 ** 29)`,
		`'x'.padStart(2 ** 29)`,
		`'x'.padEnd(2 ** 29, 'yz')`,
		`new Array(2 ** 24).join('abcdefgh')`,
		`String(new Array(2 ** 27))`,
		`Array(1000).fill('x'.repeat(1 << 20)).join('')`,
		`new Array(2 ** 28).fill(0)`,
		`Array.from({length: 2 ** 28})`,
		`new ArrayBuffer(2 ** 30)`,
		`new Uint8Array(2 ** 30)`,
		`new Float64Array({length: 2 ** 27})`,
		`new (new Uint8Array(1).constructor)(2 ** 30)`,
		`new (new ArrayBuffer(1).constructor)(2 ** 30)`,
		`(() => { const a = []; for (let i = 0; i < 100; i++) a.push('x'.repeat(1 << 20)); return a.length })()`,
	} {
		t.Run(expr, func(t *testing.T) {
			dir := files(t, map[string]string{"m.js": "export default () => { const v = " + expr + "; return typeof v }"})
			s := mustLoad(t, filepath.Join(dir, "m.js"), Options{MaxRuntimes: 1, MaxMemory: 64 << 20, Timeout: 30 * time.Second})
			se := scriptErr(t, callErr(s, nil))
			if se.Kind != KindThrown || !strings.HasPrefix(se.Message, "RangeError: ") || !strings.Contains(se.Message, "more than 64 MiB (script_max_memory)") {
				t.Fatalf("got %+v", se)
			}
			// The budget is per call: the runtime serves the next one.
			if st := s.PoolStats(); st.Idle != 1 {
				t.Errorf("pool %+v", st)
			}
		})
	}
}

// TestWrappedBuiltinsBehave: within the budget the wrapped builtins do
// what the originals do.
func TestWrappedBuiltinsBehave(t *testing.T) {
	dir := files(t, map[string]string{"b.js": `export default () => {
		const cyclic = [1, 2]; cyclic.push(cyclic);
		let caught = '';
		try { 'x'.repeat(-1) } catch (e) { caught = e.name }
		return [
			'ab'.repeat(3), 'ab'.repeat(0), '5'.padStart(3, '0'), 'x'.padEnd(4), 'x'.padEnd(5, ''),
			[1, [2, 3], null, undefined, 'z'].join('-'), String([1, 2]), [1, 2] + '', cyclic.join(),
			[0, 0, 0, 0].fill(7, 1, -1), Array.from('abc'), Array.from([1, 2], x => x * 2),
			new Uint8Array([1, 2, 300]).join(), new Uint8Array(4).length, new Uint8Array(new ArrayBuffer(8), 2).length,
			new ArrayBuffer(3).byteLength, new Uint8Array(2) instanceof Uint8Array, Uint8Array.name,
			Uint8Array.BYTES_PER_ELEMENT, Uint8Array.from([1]).length, new Uint8Array(2).constructor === Uint8Array,
			String.prototype.repeat.name, caught,
		]
	}`})
	s := mustLoad(t, filepath.Join(dir, "b.js"), Options{})
	want := `["ababab","","005","x   ","x","1-2,3---z","1,2","1,2","1,2,",[0,7,7,0],["a","b","c"],[2,4],"1,2,44",4,6,3,true,"Uint8Array",1,1,true,"repeat","RangeError"]`
	if got := call(t, s, nil); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
