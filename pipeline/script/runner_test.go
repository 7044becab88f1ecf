package script

import (
	"bytes"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// runtimeGoroutines counts the goroutines of runtimes (runner.start),
// letting the collector run the cleanups of dropped runners until the
// count is at most max or two seconds have passed.
func runtimeGoroutines(max int) int {
	buf := make([]byte, 1<<20)
	n := 0
	for deadline := time.Now().Add(2 * time.Second); ; {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		n = bytes.Count(buf[:runtime.Stack(buf, true)], []byte("script.serveOne("))
		if n <= max || time.Now().After(deadline) {
			return n
		}
	}
}

// A runtime's goroutine (runner.start) lives as long as the runtime: it
// ends when a Script is dropped with its pooled runtimes (a config
// reload) and when a runtime is retired, so that neither leaks.
func TestRuntimeGoroutinesEnd(t *testing.T) {
	dir := files(t, map[string]string{
		"ok.js":  `export default ({n}) => n + 1`,
		"big.js": `export default () => 'x'.repeat(1000)`,
	})
	before := runtimeGoroutines(0)
	func() {
		for range 20 {
			s := mustLoad(t, filepath.Join(dir, "ok.js"), Options{MaxRuntimes: 2})
			if got := call(t, s, map[string]any{"n": 1}); got != "2" {
				t.Fatalf("got %s", got)
			}
		}
	}()
	// The last Script may still be held (a register, the collector's
	// pace): two of twenty is allowed.
	if after := runtimeGoroutines(before + 2); after > before+2 {
		t.Fatalf("%d runtime goroutines after dropping 20 scripts, %d before", after, before)
	}
	// A result over the output limit: the runtime is not reused, but
	// retired at once, its goroutine with it (the Script stays).
	s := mustLoad(t, filepath.Join(dir, "big.js"), Options{MaxOutput: 100})
	base := runtimeGoroutines(1 << 30) // one collection: the count can only fall after it
	for range 20 {
		if _, err := s.Call(t.Context(), nil); err == nil {
			t.Fatal("no error for a result over the output limit")
		}
	}
	if after := runtimeGoroutines(base); after > base {
		t.Fatalf("%d runtime goroutines after 20 failed calls of one script, %d before", after, base)
	}
	runtime.KeepAlive(s)
}

// A result is read once, by the encoder: a getter runs once (the check
// for a returned promise used to copy the whole object into Go values,
// running every getter an extra time).
func TestResultGettersRunOnce(t *testing.T) {
	dir := files(t, map[string]string{"get.js": `export default () => { let n = 0; return { get x() { return ++n } } }`})
	s := mustLoad(t, filepath.Join(dir, "get.js"), Options{})
	if got := call(t, s, nil); got != `{"x":1}` {
		t.Fatalf("got %s, want {\"x\":1}", got)
	}
}
