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
	big := map[string]*pipeline.Tool{}
	for name, src := range map[string]*Source{
		"stdio": {Transport: TransportStdio, Command: exe, Args: []string{"-test.run=^$"},
			Env: map[string]string{"EDGEMCP_MCP_TEST_SERVER": "1"}, RestartBackoff: caddy.Duration(time.Hour)},
		"http": {URL: "http://" + l.Addr().String() + "/mcp", Transport: TransportStreamable},
	} {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		b.Cleanup(cancel)
		if err := src.Provision(ctx); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = src.Cleanup() })
		tools, _ := src.Tools("l")
		for _, t := range tools {
			if t.Original == "big" {
				big[name] = t
			}
		}
	}
	for _, tc := range []struct {
		name, source string
		bytes        int
	}{{"stdio", "stdio", size}, {"http", "http", size}, {"stdio 128MiB", "stdio", 128 << 20}} {
		b.Run(tc.name, func(b *testing.B) {
			tool := big[tc.source]
			b.SetBytes(int64(tc.bytes))
			b.ReportAllocs()
			for b.Loop() {
				res, err := tool.Executor.Execute(context.Background(), &pipeline.Call{Tool: tool, Inputs: map[string]any{"bytes": tc.bytes}})
				if tc.bytes == size && (err != nil || len(res.Native) < size) {
					b.Fatalf("%v", err)
				}
			}
		})
	}
}
