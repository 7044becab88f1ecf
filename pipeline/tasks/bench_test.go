package tasks

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// BenchmarkTaskRound is what a task costs the gateway beyond its call: a
// round of create (Start), tasks/get and the wait for the result (Await),
// on this node's memory and on the shared Redis, for a call that answers
// at once. The call itself is the same as a plain call's.
func BenchmarkTaskRound(b *testing.B) {
	work := func(context.Context) (json.RawMessage, error) { return json.RawMessage(result), nil }
	for _, kv := range []struct {
		name string
		kv   func(b *testing.B) KV
	}{
		{"memory", func(*testing.B) KV { return NewMemory(1<<20, 1<<30) }},
		{"redis", func(b *testing.B) KV { return testservices.NewRedisKV(b) }},
	} {
		b.Run(kv.name, func(b *testing.B) {
			prefix := "bench:" + newID() + ":"
			if kv.name == "redis" {
				prefix = testservices.RedisPrefix(b)
			}
			r := New(kv.kv(b), Config{Prefix: prefix})
			defer r.Close()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				task, err := r.Start(ctx, Spec{Tool: "t", Identity: alice, TTL: time.Minute}, work)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.Get(ctx, task.ID, as(alice)); err != nil {
					b.Fatal(err)
				}
				if done, err := r.Await(ctx, task.ID, as(alice)); err != nil || string(done.Result) != result {
					b.Fatal(done, err)
				}
			}
		})
	}
}
