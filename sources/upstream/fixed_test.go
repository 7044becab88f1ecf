package upstream

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
)

func TestParseFixed(t *testing.T) {
	for text, want := range map[string]string{
		"{{ auth.subject }}": "auth.subject", "{{auth.claims.org.id}}": "auth.claims.org.id", "acme": "",
	} {
		f, err := ParseFixed(text)
		if err != nil || f.Identity() != want {
			t.Errorf("%q: %+v %v", text, f, err)
		}
	}
	for _, bad := range []string{"{{ inputs.x }}", "{{ auth.claims. }}", "{{ env.SECRET }}"} {
		if _, err := ParseFixed(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestFixedArgsApply: a fixed argument leaves properties and required,
// and a cached tool whose arguments come from the caller is no longer
// shared between callers.
func TestFixedArgsApply(t *testing.T) {
	f, _ := ParseFixedArgs(map[string]string{"org": "{{ auth.claims.org }}", "absent": "x"})
	var got map[string]any
	tool := &pipeline.Tool{
		Name:        "t",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"org":{"type":"string"},"q":{"type":"string"}},"required":["org","q"]}`),
		Cache:       &pipeline.CachePolicy{TTL: 1, Shared: true},
		Executor: pipeline.ExecutorFunc(func(_ context.Context, call *pipeline.Call) (*pipeline.Result, error) {
			got = call.Inputs
			return &pipeline.Result{}, nil
		}),
	}
	out, err := f.Apply(tool)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(out.InputSchema); strings.Contains(s, "org") || !strings.Contains(s, `"required":["q"]`) || out.Cache.Shared {
		t.Errorf("schema %s shared %t", s, out.Cache.Shared)
	}
	if _, err := out.Executor.Execute(context.Background(), &pipeline.Call{Inputs: map[string]any{"q": "x"},
		Identity: &pipeline.Identity{Claims: map[string]any{"org": "acme"}}}); err != nil || got["org"] != "acme" || got["q"] != "x" {
		t.Errorf("call: %v %v", got, err)
	}
	if tool.Cache.Shared != true || strings.Contains(string(tool.InputSchema), `"required":["q"]`) {
		t.Error("the original tool was changed")
	}
}
