package testservices

import (
	"os"
	"path/filepath"
	"testing"
)

// Everything returns Node 22 and the entry script of the MCP project's
// server-everything, a real upstream MCP server (stdio by default).
func Everything(t testing.TB) (node, script string) {
	t.Helper()
	dir := NodeDir(t)
	script = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("server-everything missing at %s: run `npm ci` in %s", script, dir)
	}
	return Node22(t, dir), script
}
