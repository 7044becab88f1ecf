package redis

import (
	"context"
	"testing"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// BenchmarkDo: HGETALL of a small hash through Do (pool, RESP3 map to
// JSON-ready values). Run by hand:
//
//	go test ./connectors/redis -run '^$' -bench BenchmarkDo -benchtime=2s
func BenchmarkDo(b *testing.B) {
	p := testservices.RedisPrefix(b)
	testservices.RedisClient(b).HSet(context.Background(), p+"h", "name", "Ada", "email", "ada@example.com", "lang", "en")
	c := open(b, Config{ReadOnly: true})
	args := []string{"HGETALL", p + "h"}
	ctx := context.Background()
	for b.Loop() {
		v, err := c.Do(ctx, args)
		if err != nil {
			b.Fatal(err)
		}
		if len(v.(map[string]any)) != 3 {
			b.Fatalf("reply %v", v)
		}
	}
}
