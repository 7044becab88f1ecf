package caddymodule

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edgemcp/edgemcp/pipeline/script"
)

// TestAbandonedRuntimeMetrics: a call that returns at its limit while its
// runtime is stuck in a native operation (a backtracking regular
// expression) shows in edgemcp_script_abandoned_total and, while the
// runtime still runs, in edgemcp_script_abandoned_runtimes.
func TestAbandonedRuntimeMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if err := registerMetrics(reg); err != nil {
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
	h := &Handler{}
	t.Cleanup(h.unexposeAll)
	h.exposeScriptPool("re handler", s)

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
	// (a second in these tests: main_test.go).
	deadline := time.Now().Add(60 * time.Second)
	for gather(t, reg)["edgemcp_script_abandoned_runtimes|re handler"] != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the abandoned runtime still runs after 60s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
