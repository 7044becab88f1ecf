//go:build linux

package caddymodule

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// conformanceScenarios are the suite's server scenarios (`conformance
// list --server`, 0.1.16): tools and what travels during a call,
// resources (with subscriptions), prompts, completion, the SSE stream
// scenarios and DNS rebinding protection. The fixture has what each needs.
var conformanceScenarios = []string{
	"server-initialize", "ping", "tools-list", "logging-set-level",
	"tools-call-simple-text", "tools-call-image", "tools-call-audio", "tools-call-embedded-resource",
	"tools-call-mixed-content", "tools-call-error", "tools-call-with-logging", "tools-call-with-progress",
	"tools-call-sampling", "tools-call-elicitation", "elicitation-sep1034-defaults", "elicitation-sep1330-enums",
	"json-schema-2020-12",
	"resources-list", "resources-read-text", "resources-read-binary", "resources-templates-read",
	"resources-subscribe", "resources-unsubscribe",
	"prompts-list", "prompts-get-simple", "prompts-get-with-args", "prompts-get-embedded-resource", "prompts-get-with-image",
	"completion-complete", "server-sse-polling", "server-sse-multiple-streams", "dns-rebinding-protection",
}

// startConformanceUpstream runs tests/node/conformance-upstream.mjs (the
// suite's fixtures on the TypeScript SDK) and returns its endpoint.
func startConformanceUpstream(t *testing.T) string {
	t.Helper()
	port := freePort(t)
	startNodeServer(t, "conformance-upstream.mjs", port)
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

var scenarioLine = regexp.MustCompile(`(?m)^([✓✗]) ([a-z0-9-]+): (\d+) passed, (\d+) failed$`)

// runConformance runs the scenarios against url and returns which passed.
func runConformance(t *testing.T, url string, scenarios []string) (map[string]bool, string) {
	t.Helper()
	return runConformanceOf(t, "", url, scenarios)
}

// runConformanceOf runs the scenarios of suite, a package of tests/node
// ("": the pinned @modelcontextprotocol/conformance), against url.
func runConformanceOf(t *testing.T, suite, url string, scenarios []string) (map[string]bool, string) {
	t.Helper()
	dir := nodeDir(t)
	out := conformanceOutput(dir, node22(t, dir), suite, url, scenarios)
	passed := map[string]bool{}
	for _, m := range scenarioLine.FindAllStringSubmatch(out, -1) {
		passed[m[2]] = m[1] == "✓"
	}
	if len(passed) != len(scenarios) {
		t.Fatalf("conformance.sh reported %d of %d scenarios:\n%s", len(passed), len(scenarios), indent(out))
	}
	return passed, out
}

// conformanceOutput is what conformance.sh in dir prints for the
// scenarios of suite against url, run with node.
func conformanceOutput(dir, node, suite, url string, scenarios []string) string {
	cmd := exec.Command("bash", append([]string{filepath.Join(dir, "conformance.sh"), url}, scenarios...)...)
	cmd.Env = append(os.Environ(), "EDGEMCP_NODE22="+node)
	if suite != "" {
		cmd.Env = append(cmd.Env, "EDGEMCP_CONFORMANCE="+suite)
	}
	out, _ := cmd.CombinedOutput() // a failed scenario is an exit status: read the lines
	return string(out)
}

// TestConformanceThroughMCPSource: the official conformance suite's server
// scenarios run against an upstream MCP server directly and through the
// gateway fronting it as an MCP source (prefix off: the scenarios look
// tools and prompts up by the upstream's names; resources keep their URIs). Every scenario passes both ways; the
// scenarios run one after another from new sessions, so the upstream's log
// messages must reach the session whose call is in flight, not the one
// that called just before.
func TestConformanceThroughMCPSource(t *testing.T) {
	up := startConformanceUpstream(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source conf mcp %s {
			prefix off
		}
	}
}`, up))
	direct, _ := runConformance(t, up, conformanceScenarios)
	proxied, out := runConformance(t, g.URL, conformanceScenarios)
	var both, onlyDirect []string
	for _, s := range conformanceScenarios {
		switch {
		case direct[s] && proxied[s]:
			both = append(both, s)
		case direct[s]:
			onlyDirect = append(onlyDirect, s)
		}
	}
	t.Logf("pass directly and through the gateway: %s", strings.Join(both, " "))
	for _, s := range conformanceScenarios {
		if direct[s] != proxied[s] {
			t.Logf("%s: directly %v, through the gateway %v", s, direct[s], proxied[s])
		}
	}
	if len(onlyDirect) > 0 {
		t.Errorf("pass directly but not through the gateway: %v\n%s", onlyDirect, indent(out))
	}
	if len(both) < len(conformanceScenarios) {
		t.Errorf("only %d scenarios pass both ways", len(both))
	}
}

// startMCPGoConformance builds and runs mcp-go's own conformance fixture
// server (examples/conformance in mcp-go's module), which takes
// subscriptions to test://watched-resource without listing it.
func startMCPGoConformance(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "conformance")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/mark3labs/mcp-go/examples/conformance").CombinedOutput(); err != nil {
		t.Fatalf("building mcp-go's conformance server: %v\n%s", err, out)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "CONFORMANCE_ADDR="+addr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	waitFor(t, "mcp-go's conformance server", func() bool {
		res, err := http.Get("http://" + addr + "/health")
		if err == nil {
			res.Body.Close()
		}
		return err == nil && res.StatusCode == http.StatusOK
	})
	return "http://" + addr + "/mcp"
}

// TestConformanceSubscribeUnlistedURI: the suite's resources-subscribe and
// resources-unsubscribe scenarios subscribe to test://watched-resource,
// which mcp-go's fixture takes but does not list. Through the gateway with
// two sources whose servers both take subscriptions, the subscription goes
// to the source that owns the test scheme (docs/sources.md, MCP servers,
// Resources), and both scenarios pass as they do directly.
func TestConformanceSubscribeUnlistedURI(t *testing.T) {
	up := startMCPGoConformance(t)
	node, script := everything(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source conf mcp %s {
			prefix off
			required
		}
		source ev mcp stdio %s %s stdio {
			required
		}
	}
}`, up, node, script))
	scenarios := []string{"resources-subscribe", "resources-unsubscribe"}
	direct, _ := runConformance(t, up, scenarios)
	proxied, out := runConformance(t, g.URL, scenarios)
	for _, s := range scenarios {
		if !direct[s] || !proxied[s] {
			t.Errorf("%s: directly %v, through the gateway %v\n%s", s, direct[s], proxied[s], indent(out))
		}
	}
}
