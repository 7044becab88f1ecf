package telemetry

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/script"
)

// TestMain ends a backtracking regular expression in a script after a
// second rather than script.RegexMatchTimeout: TestAbandonedRuntimeMetrics
// waits for its goroutine to end.
func TestMain(m *testing.M) {
	regexp2.DefaultMatchTimeout = time.Second
	os.Exit(m.Run())
}

// fakeStats stands for the script runtime pool and the result cache, which
// other packages provide; what is tested here is the exposure hook.
type fakeStats struct {
	pool  pipeline.PoolStats
	cache pipeline.CacheStats
}

func (f *fakeStats) PoolStats() pipeline.PoolStats   { return f.pool }
func (f *fakeStats) CacheStats() pipeline.CacheStats { return f.cache }

func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			for _, l := range m.GetLabel() {
				key += "|" + l.GetValue()
			}
			switch {
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// TestExposedStats: the hooks for the script pool and the cache, the
// newest exposure of a name winning while a reload overlaps two configs,
// and Cleanup ending a handler's exposures. Registering twice in one
// registry (two handlers) is not an error.
func TestExposedStats(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	for range 2 {
		if err := Register(reg); err != nil {
			t.Fatal(err)
		}
	}
	old, cur := new(int), new(int) // two owners, as two handlers
	t.Cleanup(func() { Unexpose(old); Unexpose(cur) })
	oldStats := &fakeStats{pool: pipeline.PoolStats{Max: 4, InUse: 1, Waits: 2}, cache: pipeline.CacheStats{Entries: 5, Evictions: 6}}
	newStats := &fakeStats{pool: pipeline.PoolStats{Max: 8, InUse: 3, Waits: 7}, cache: pipeline.CacheStats{Entries: 9, Evictions: 10}}
	ExposeScriptPool(old, "scripts", oldStats)
	ExposeCache(old, "results", oldStats)
	ExposeScriptPool(cur, "scripts", newStats)
	ExposeCache(cur, "results", newStats)

	got := gather(t, reg)
	want := map[string]float64{
		"edgemcp_script_pool_max_runtimes|scripts": 8, "edgemcp_script_pool_in_use_runtimes|scripts": 3,
		"edgemcp_script_pool_waits_total|scripts": 7, "edgemcp_cache_entries|results": 9,
		"edgemcp_cache_evictions_total|results": 10,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	Unexpose(cur)
	if got := gather(t, reg); got["edgemcp_cache_evictions_total|results"] != 6 {
		t.Errorf("after the new config's cleanup the old exposure should show: %v", got)
	}
	Unexpose(old)
	for k := range gather(t, reg) {
		if strings.HasPrefix(k, "edgemcp_script_pool") || strings.HasPrefix(k, "edgemcp_cache_e") {
			t.Errorf("%s still exposed after cleanup", k)
		}
	}
}

// TestAbandonedRuntimeMetrics: a call that returns at its limit while its
// runtime is stuck in a native operation (a backtracking regular
// expression) shows in edgemcp_script_abandoned_total and, while the
// runtime still runs, in edgemcp_script_abandoned_runtimes.
func TestAbandonedRuntimeMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if err := Register(reg); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "re.js")
	if err := os.WriteFile(file, []byte(`export default ({s}) => /^((a+)+)\2?$/.test(s)`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := script.Load(file, script.Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	owner := new(int)
	t.Cleanup(func() { Unexpose(owner) })
	ExposeScriptPool(owner, "re handler", s)

	if _, err := s.Call(context.Background(), map[string]any{"s": strings.Repeat("a", 24) + "!"}); err == nil {
		t.Fatal("the backtracking call succeeded")
	}
	got := gather(t, reg)
	// The runtime runs on until the match timeout; on a loaded machine that
	// second can be over before the gauge is read, so 0 is allowed here
	// (the counter says it was abandoned either way).
	if got["edgemcp_script_abandoned_total|re handler"] != 1 || got["edgemcp_script_abandoned_runtimes|re handler"] > 1 {
		t.Errorf("after the call: %v", got)
	}
	// The stuck runtime ends at the regular expression's match timeout
	// (a second in these tests: TestMain).
	deadline := time.Now().Add(60 * time.Second)
	for gather(t, reg)["edgemcp_script_abandoned_runtimes|re handler"] != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the abandoned runtime still runs after 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestToolsHeld: a pinned source's held tools by reason (labels sort by
// name: reason, source), changed and new
// reported at zero too, and read at each scrape.
func TestToolsHeld(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if err := Register(reg); err != nil {
		t.Fatal(err)
	}
	owner := new(int)
	t.Cleanup(func() { Unexpose(owner) })
	held := map[string]int{"changed": 2}
	ExposeHeld(owner, "files", func() map[string]int { return held })
	got := gather(t, reg)
	if got["edgemcp_tools_held|changed|files"] != 2 || got["edgemcp_tools_held|new|files"] != 0 {
		t.Errorf("%v", got)
	}
	if _, ok := got["edgemcp_tools_held|new|files"]; !ok {
		t.Errorf("new is not reported at zero: %v", got)
	}
	held = map[string]int{"new": 1}
	if got := gather(t, reg); got["edgemcp_tools_held|changed|files"] != 0 || got["edgemcp_tools_held|new|files"] != 1 {
		t.Errorf("after a change: %v", got)
	}
}
