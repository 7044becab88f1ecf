package toolsearch

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkSearch5000 is search_tools' own cost on a 5,000-tool registry:
// queries as an agent writes them ("create invoices billing": words shared
// by a thousand tools; three words of one description), limit 10, an Allow
// that admits everything (the gateway's auth filter, minus the provider).
// Besides ns/op it reports the p50 and p99 of single searches, which is
// what the bound (p50 < 2 ms) is about:
//
//	go test ./pipeline/toolsearch -run '^$' -bench Search5000 -benchtime 20000x
func BenchmarkSearch5000(b *testing.B) {
	g := generate(1)
	x := New(g.docs)
	r := rand.New(rand.NewSource(3))
	queries := make([]string, 1024)
	for i := range queries {
		d := r.Intn(len(g.docs))
		if i%2 == 0 {
			parts := strings.SplitN(g.docs[d].Name, "_", 3)
			queries[i] = parts[1] + " " + parts[2] + "s " + parts[0]
		} else {
			queries[i] = strings.Join(strings.Fields(g.sentences[d])[:3], " ")
		}
	}
	allow := func(int) bool { return true }
	took := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		hits := x.Search(Query{Text: queries[i%len(queries)], Limit: 10, Allow: allow})
		took = append(took, time.Since(t0))
		if len(hits) == 0 {
			b.Fatalf("no hit for %q", queries[i%len(queries)])
		}
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds())/1e6, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds())/1e6, "p99-ms")
}

// BenchmarkBuild5000 is the cost of indexing a 5,000-tool registry, paid
// once per registry version (at load and when a source's tools change).
func BenchmarkBuild5000(b *testing.B) {
	docs := generate(1).docs
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		New(docs)
	}
}
