package cache

import (
	"context"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// BenchmarkKeyWithIdentity is the cost of one call's cache key for a
// caller with a typical token's claims (docs/architecture.md, Cache):
//
//	go test ./pipeline/cache -run '^$' -bench BenchmarkKeyWithIdentity -benchtime=20000x -benchmem
func BenchmarkKeyWithIdentity(b *testing.B) {
	c, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	tool := &pipeline.Tool{Name: "orders", Source: "db", Executor: &counter{}, Cache: &pipeline.CachePolicy{TTL: time.Minute}}
	tool.Auth = authorizer{}
	x := c.Wrap(tool).(*executor)
	id := &pipeline.Identity{Subject: "248289761001", Claims: map[string]any{
		"iss": "https://idp.example.com/", "aud": []any{"https://gateway.example.com/mcp"},
		"exp": 1.7e9, "iat": 1.7e9 - 3600, "nbf": 1.7e9 - 3600, "jti": "9f1c2d3e-4b5a-6789-abcd-ef0123456789",
		"scope": "mcp:use orders:read customers:read", "tenant": "acme", "azp": "agent-cli",
		"roles": []any{"analyst", "viewer"},
	}}
	call := &pipeline.Call{Tool: tool, Inputs: map[string]any{"customer_id": 42, "status": "open"}, Identity: id}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if k, err := x.key(ctx, call); err != nil || k == "" {
			b.Fatal(k, err)
		}
	}
}
