package connguard

import (
	"context"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// instant answers at once: the benchmark measures the guard alone.
type instant struct{}

func (instant) Dialect() sqltemplate.Dialect { return sqltemplate.Postgres }
func (instant) ReadOnly() bool               { return true }
func (instant) MaxConns() int                { return 4 }
func (instant) Query(context.Context, string, []any) (*pipeline.Rows, error) {
	return &pipeline.Rows{}, nil
}

// BenchmarkGuard prints what admission control adds to a call, with 4
// slots and as many goroutines as GOMAXPROCS (no waiting), against the bare
// connector. Run: go test -run '^$' -bench Guard -benchtime 1s ./pipeline/connguard/
func BenchmarkGuard(b *testing.B) {
	for _, bc := range []struct {
		name string
		conn pipeline.SQLConnector
	}{
		{"bare", instant{}},
		{"guarded", NewPool(instant{}, 0, nil).Guard(Options{MaxWaiting: -1})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := bc.conn.Query(context.Background(), "", nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
