package openapi

import (
	"context"
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
