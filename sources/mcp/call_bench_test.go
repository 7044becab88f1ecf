package mcp

import (
	"context"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
)

// BenchmarkProxiedCall is one small tools/call through an MCP source over
// streamable HTTP to an in-process mcp-go server: the source's own work
// per call (the upstream's is in the figures too, the same in every
// build). Run by hand, with -cpuprofile to see the source's share:
//
//	go test ./sources/mcp -run '^$' -bench ProxiedCall -benchmem
func BenchmarkProxiedCall(b *testing.B) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	b.Cleanup(cancel)
	src := &Source{URL: testservices.StartEchoUpstream(b), Transport: TransportStreamable}
	if err := src.Provision(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = src.Cleanup() })
	tools, err := src.Tools("up")
	if err != nil || len(tools) != 1 {
		b.Fatalf("tools %v, %v", tools, err)
	}
	tool := tools[0]
	b.ReportAllocs()
	for b.Loop() {
		res, err := tool.Executor.Execute(context.Background(), &pipeline.Call{Tool: tool, Inputs: map[string]any{"message": "m1"}})
		if err != nil || len(res.Native) == 0 {
			b.Fatalf("%v", err)
		}
	}
}
