package testservices

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// StartEchoUpstream starts an MCP server over streamable HTTP (mcp-go's,
// without sessions' state) on a loopback port until the test ends, and
// returns its endpoint's URL: one tool, "echo", that answers "echo: " and
// its argument "message". The benchmarks of proxied calls use it, so
// that the upstream's share of their figures is the same in every one.
func StartEchoUpstream(tb testing.TB) string {
	tb.Helper()
	m := server.NewMCPServer("echo", "1", server.WithToolCapabilities(true))
	m.AddTool(mcp.NewTool("echo", mcp.WithString("message")), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("echo: " + req.GetString("message", "")), nil
	})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(m))
	tb.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}
