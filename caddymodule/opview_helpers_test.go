package caddymodule

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

// exampleGatewayCaddyfile is Caddyfile.example made fit for startGateway: its
// global options dropped (the harness writes its own), the site address
// written SITE, and the demo database created in a temp dir from the seed.
func exampleGatewayCaddyfile(t testing.TB) string {
	t.Helper()
	raw, err := os.ReadFile("../Caddyfile.example")
	if err != nil {
		t.Fatal(err)
	}
	src := string(raw)
	src = regexp.MustCompile(`(?ms)^\{\n.*?^\}\n`).ReplaceAllString(src, "")
	if !strings.Contains(src, "http://localhost:8080 {") {
		t.Fatal("Caddyfile.example: site address http://localhost:8080 not found")
	}
	examples, err := filepath.Abs("../examples")
	if err != nil {
		t.Fatal(err)
	}
	seed, err := filepath.Abs("../examples/data/demo.sql")
	if err != nil {
		t.Fatal(err)
	}
	r := strings.NewReplacer(
		"http://localhost:8080 {", "SITE {",
		"./examples/data/demo.db", filepath.Join(t.TempDir(), "demo.db"),
		"./examples/data/demo.sql", seed,
		"./examples/", examples+"/",
	)
	return r.Replace(src)
}

// runMCPCommand runs `caddy mcp <args...>` in-process, through the command
// registered with Caddy, and returns what it printed.
func runMCPCommand(t testing.TB, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	c, ok := caddycmd.Commands()["mcp"]
	if !ok {
		t.Fatal("the mcp command is not registered")
	}
	root := &cobra.Command{Use: "mcp"}
	c.CobraFunc(root)
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}
