package script

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
)

// go test ./pipeline/script -run '^$' -bench . -benchtime 2s
//
// BenchmarkMappers is the per-call cost both mappers add to a DB tool
// (the target: under 50 µs at p50), with the payloads the engine
// builds for a one-row result.
func BenchmarkMappers(b *testing.B) {
	dir := files(b, map[string]string{
		"in.js":  `export default ({inputs}) => ({id: inputs.user_id})`,
		"out.js": `export default ({results}) => results.map(r => ({...r, display: r.name + ' <' + r.email + '>'}))`,
	})
	in := InputMapper{mustLoad(b, filepath.Join(dir, "in.js"), Options{})}
	out := OutputMapper{mustLoad(b, filepath.Join(dir, "out.js"), Options{})}
	tool := &pipeline.Tool{Name: "get-user", Description: "Fetch a user by id"}
	rows := &pipeline.Rows{Columns: []string{"id", "name", "email", "created_at"},
		Values: [][]any{{int64(42), "user 42", "user42@example.com", "2024-01-01T00:42:00Z"}}}
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			call := &pipeline.Call{Tool: tool, Inputs: map[string]any{"user_id": int64(42)}}
			if _, err := in.Transform(ctx, pipeline.Payload(call, "inputs", call.Inputs)); err != nil {
				b.Fatal(err)
			}
			if _, err := out.Transform(ctx, pipeline.Payload(call, "results", rows)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkHandler is one handler call with a small result.
func BenchmarkHandler(b *testing.B) {
	dir := files(b, map[string]string{"h.js": `export default ({inputs}) => ({greeting: 'Hello, ' + inputs.name + '!'})`})
	h := Handler{mustLoad(b, filepath.Join(dir, "h.js"), Options{})}
	tool := &pipeline.Tool{Name: "hello", Description: "Say hello"}
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := h.Execute(ctx, &pipeline.Call{Tool: tool, Inputs: map[string]any{"name": "Ada"}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkNewRuntime is the creation of one runtime (module evaluation,
// sandbox setup, memory-budget wrappers and the freezing of the
// built-ins): paid once per pooled runtime, and again after a runtime is
// dropped (a timeout, a failure other than a throw).
func BenchmarkNewRuntime(b *testing.B) {
	dir := files(b, map[string]string{"h.js": `export default ({inputs}) => ({greeting: 'Hello, ' + inputs.name + '!'})`})
	s := mustLoad(b, filepath.Join(dir, "h.js"), Options{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.newRunner(); err != nil {
			b.Fatal(err)
		}
	}
}
