package mcp

import (
	"context"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/pipeline"
)

// BenchmarkLargeResult is one call of a tool answering 4 MiB of text,
// over stdio and over streamable HTTP: what max_response_size's bounded
// reading costs a large answer that passes (compare with a build without
// it). "stdio 128MiB" is an answer far beyond the bound: its B/op is what
// the gateway allocates for it (the child is another process).
func BenchmarkLargeResult(b *testing.B) {
	const size = 4 << 20
	text := bigText(size)
	m := server.NewMCPServer("large", "1", server.WithToolCapabilities(true))
	m.AddTool(mcp.NewTool("big", mcp.WithNumber("bytes")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(text), nil
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: server.NewStreamableHTTPServer(m)}
	go srv.Serve(l)
	b.Cleanup(func() { _ = srv.Close() })
	exe, _ := os.Executable()
	for _, tc := range []struct {
		name string
		src  *Source
	}{
		{"stdio", &Source{Transport: TransportStdio, Command: exe, Args: []string{"-test.run=^$"},
			Env: map[string]string{"EDGEMCP_MCP_TEST_SERVER": "1"}, RestartBackoff: caddy.Duration(time.Hour)}},
		{"http", &Source{URL: "http://" + l.Addr().String() + "/mcp", Transport: TransportStreamable}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
			defer cancel()
			if err := tc.src.Provision(ctx); err != nil {
				b.Fatal(err)
			}
			defer tc.src.Cleanup()
			tools, _ := tc.src.Tools("l")
			var big *pipeline.Tool
			for _, t := range tools {
				if t.Original == "big" {
					big = t
				}
			}
			b.SetBytes(size)
			for b.Loop() {
				res, err := big.Executor.Execute(context.Background(), &pipeline.Call{Tool: big, Inputs: map[string]any{"bytes": size}})
				if err != nil || len(res.Native) < size {
					b.Fatalf("%v", err)
				}
			}
			if tc.name != "stdio" {
				return
			}
			b.Run("128MiB", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_, _ = big.Executor.Execute(context.Background(), &pipeline.Call{Tool: big, Inputs: map[string]any{"bytes": 128 << 20}})
				}
			})
		})
	}
}
