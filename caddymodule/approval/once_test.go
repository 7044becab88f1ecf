package approval

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/internal/testservices"
	storeredis "github.com/edgemcp/edgemcp/stores/redis"
)

// BenchmarkApprovalSpend is what one approved 2026-07-28 call adds to
// its approval: recording its answer as used, in this node's memory or
// with one SET NX on the Redis the nodes share.
func BenchmarkApprovalSpend(b *testing.B) {
	store, err := storeredis.Open(testservices.RedisURL(b), RedisTimeout)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	for _, s := range []struct {
		name  string
		spent spentApprovals
	}{
		{"local", &localSpent{max: 1 << 30, until: map[string]time.Time{}}},
		{"redis", sharedSpent{store: store, prefix: testservices.RedisPrefix(b)}},
	} {
		i := 0 // nonces differ across the runs of one benchmark too
		b.Run(s.name, func(b *testing.B) {
			for b.Loop() {
				i++
				if first, err := s.spent.spend(context.Background(), strconv.Itoa(i), time.Minute); !first || err != nil {
					b.Fatal(first, err)
				}
			}
		})
	}
}
