//go:build linux

package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// MCP sources are tested against a real upstream MCP server: the MCP
// project's own server-everything (tests/node), started by Node 22.

// everything returns the Node 22 binary and server-everything's entry
// script.
func everything(t *testing.T) (node, script string) {
	t.Helper()
	dir := nodeDir(t)
	script = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("server-everything missing at %s: run `npm ci` in %s", script, dir)
	}
	return node22(t, dir), script
}

// mcpChild is the pid of this process's child running server-everything
// (0 when there is none): the guard the server runs under (startChild).
func mcpChild(t *testing.T) int {
	t.Helper()
	pid := 0
	for _, p := range testservices.Processes(t) {
		if p.PPID == os.Getpid() && p.State != "Z" && strings.Contains(p.Cmdline, "server-everything") {
			if pid != 0 {
				t.Fatalf("two server-everything children: %d and %d", pid, p.PID)
			}
			pid = p.PID
		}
	}
	return pid
}

// groupMembers counts the live processes of process group pgid.
func groupMembers(t *testing.T, pgid int) int { return testservices.GroupMembers(t, pgid) }

// directCall calls a tool of a fresh server-everything without the
// gateway and returns its raw result.
func directCall(t *testing.T, node, script, tool string, args map[string]any) json.RawMessage {
	t.Helper()
	tr := transport.NewStdio(node, nil, script, "stdio")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tr.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	send := func(id int, method string, params any) json.RawMessage {
		res, err := tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(id)), Method: method, Params: params})
		if err != nil || res.Error != nil {
			t.Fatalf("direct %s: %v %+v", method, err, res)
		}
		return res.Result
	}
	send(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "direct", "version": "1"}})
	if err := tr.SendNotification(ctx, mcp.JSONRPCNotification{JSONRPC: "2.0", Notification: mcp.Notification{Method: "notifications/initialized"}}); err != nil {
		t.Fatal(err)
	}
	return send(2, "tools/call", map[string]any{"name": tool, "arguments": args})
}

func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// TestMCPSourceStdioEndToEnd: server-everything, started as the source's
// child with its env and cwd, has its tools served in the namespace under
// their own names as aliases, with schemas and annotations carried over;
// results come back exactly as the server sent them (text, an image,
// structuredContent, isError); a child killed with SIGKILL is started
// again and the next call works; an unchanged reload keeps the child, a
// changed one replaces it; stopping Caddy leaves none of its process group.
func TestMCPSourceStdioEndToEnd(t *testing.T) {
	node, script := everything(t)
	cwd := t.TempDir()
	// The shell starts a grandchild (sleep) in the child's process group:
	// stopping the source must end it too.
	cfg := func(marker string) string {
		return fmt.Sprintf(`SITE {
	mcp /mcp {
		source every mcp stdio /bin/sh -c "sleep 3600 & exec %s %s stdio" {
			env EDGEMCP_MCP_MARKER %s
			cwd %s
			restart_backoff 100ms
		}
	}
}`, node, script, marker, cwd)
	}
	g := startGateway(t, cfg("first"))
	child := mcpChild(t)
	if child == 0 {
		t.Fatal("no server-everything child process")
	}
	if n := groupMembers(t, child); n != 3 {
		t.Fatalf("the child's process group has %d live processes, want 3 (the guard, node and its sleep)", n)
	}

	s := g.rawSession(t, "2025-06-18")
	list, _ := s.post(t, `{"jsonrpc":"2.0","id":100,"method":"tools/list"}`)
	var tools struct {
		Tools []struct {
			Name         string          `json:"name"`
			Title        string          `json:"title"`
			Description  string          `json:"description"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
			Annotations  map[string]any  `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(list.Result, &tools); err != nil {
		t.Fatalf("tools/list %s: %v", list.Result, err)
	}
	byName := map[string]int{}
	for i, tl := range tools.Tools {
		byName[tl.Name] = i
	}
	for _, want := range []string{"every_echo", "every_get-sum", "every_get-tiny-image", "every_get-structured-content", "every_get-env"} {
		if _, ok := byName[want]; !ok {
			t.Fatalf("tools/list lacks %s: %v", want, keys(byName))
		}
	}
	sc := tools.Tools[byName["every_get-structured-content"]]
	if sc.Title != "Get Structured Content Tool" || !strings.Contains(string(sc.OutputSchema), `"temperature"`) ||
		!strings.Contains(string(sc.InputSchema), `"Chicago"`) || sc.Annotations["readOnlyHint"] != true || sc.Annotations["openWorldHint"] != false {
		t.Errorf("get-structured-content published as %+v", sc)
	}

	// Text, by name and by the upstream's own name.
	for _, name := range []string{"every_echo", "echo"} {
		r := s.call(t, name, map[string]any{"message": "hello"}).tool(t)
		if len(r.Content) != 1 || r.Content[0].Type != "text" || r.Content[0].Text != "Echo: hello" {
			t.Errorf("%s: %+v", name, r)
		}
	}
	// The child got its env and cwd.
	if r := s.call(t, "every_get-env", map[string]any{}).tool(t); !strings.Contains(r.Content[0].Text, `"EDGEMCP_MCP_MARKER": "first"`) {
		t.Errorf("get-env: %.300s", r.Content[0].Text)
	}
	if dir, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", child)); err != nil || dir != cwd {
		t.Errorf("the child runs in %q (%v), want %q", dir, err, cwd)
	}
	// Fidelity: the results are the server's own, unchanged.
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"get-tiny-image", map[string]any{}},
		{"get-structured-content", map[string]any{"location": "Chicago"}},
		{"get-sum", map[string]any{"a": 2, "b": 40}},
		{"echo", map[string]any{}}, // refused by the server's schema: isError
	} {
		got := s.call(t, "every_"+tc.tool, tc.args)
		if got.Error != nil {
			t.Fatalf("%s: %+v", tc.tool, got.Error)
		}
		if want := directCall(t, node, script, tc.tool, tc.args); !sameJSON(t, got.Result, want) {
			t.Errorf("%s through the gateway:\n%s\ndirectly:\n%s", tc.tool, got.Result, want)
		}
	}
	if r := s.call(t, "every_get-tiny-image", map[string]any{}).Result; !strings.Contains(string(r), `"type":"image"`) || !strings.Contains(string(r), `"mimeType":"image/png"`) {
		t.Errorf("get-tiny-image: %.300s", r)
	}
	if r := s.call(t, "every_echo", map[string]any{}).tool(t); !r.IsError {
		t.Errorf("echo without its message: %+v", r)
	}

	// SIGKILL: the child is started again, and the next call works.
	if err := syscall.Kill(child, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the killed child to be reaped", func() bool { return syscall.Kill(child, 0) != nil })
	if r := s.call(t, "every_echo", map[string]any{"message": "again"}).tool(t); len(r.Content) != 1 || r.Content[0].Text != "Echo: again" {
		t.Errorf("after SIGKILL: %+v", r)
	}
	restarted := mcpChild(t)
	if restarted == 0 || restarted == child {
		t.Fatalf("after SIGKILL the child is %d (was %d)", restarted, child)
	}
	if n := groupMembers(t, child); n != 0 {
		t.Errorf("%d processes of the killed child's group are left", n)
	}

	// An unchanged reload keeps the child; a changed one replaces it.
	if err := g.load(cfg("first")); err != nil {
		t.Fatal(err)
	}
	if now := mcpChild(t); now != restarted {
		t.Errorf("unchanged reload: child %d, was %d", now, restarted)
	}
	if err := g.load(cfg("second")); err != nil {
		t.Fatal(err)
	}
	replaced := mcpChild(t)
	if replaced == 0 || replaced == restarted || groupMembers(t, restarted) != 0 {
		t.Errorf("changed reload: child %d (was %d), %d left of the old group", replaced, restarted, groupMembers(t, restarted))
	}
	s = g.rawSession(t, "2025-06-18")
	if r := s.call(t, "every_get-env", map[string]any{}).tool(t); !strings.Contains(r.Content[0].Text, `"EDGEMCP_MCP_MARKER": "second"`) {
		t.Errorf("get-env after the changed reload: %.200s", r.Content[0].Text)
	}

	// Stopping Caddy ends the child's whole process group.
	if err := caddy.Stop(); err != nil {
		t.Fatal(err)
	}
	if n := groupMembers(t, replaced); n != 0 || mcpChild(t) != 0 {
		t.Errorf("after stop: %d processes left in the child's group", n)
	}
}

// startEverythingHTTP runs server-everything over HTTP (mode
// streamableHttp or sse) on a free loopback port and returns its base URL
// once it listens.
func startEverythingHTTP(t *testing.T, mode string) string {
	t.Helper()
	node, script := everything(t)
	port := freePort(t)
	cmd := exec.Command(node, script, mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitFor(t, "server-everything to listen", func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return base
}

// TestMCPSourceHTTPEndToEnd: server-everything over streamable HTTP and
// over SSE (transport auto finds it), and an mcp-go server that wants a
// bearer token and a header: the credential reaches it, its JSON-RPC
// error is -32000 with its message, and results pass through unchanged.
func TestMCPSourceHTTPEndToEnd(t *testing.T) {
	streamable := startEverythingHTTP(t, "streamableHttp")
	sse := startEverythingHTTP(t, "sse")

	var auth atomic.Value
	up := server.NewMCPServer("up", "1")
	up.AddTool(mcp.NewTool("fail"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("the disk is on fire")
	})
	up.AddTool(mcp.NewTool("meta"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := mcp.NewToolResultText("with meta")
		r.Meta = mcp.NewMetaFromMap(map[string]any{"trace": "abc"})
		return r, nil
	})
	h := server.NewStreamableHTTPServer(up)
	secured := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization") + "|" + r.Header.Get("X-Tenant"))
		if r.Header.Get("Authorization") != "Bearer up-secret" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(secured.Close)
	t.Setenv("EDGEMCP_TEST_UP_TOKEN", "up-secret")

	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source ev mcp %s/mcp {
			transport streamable
		}
		source old mcp %s/sse
		source sec mcp %s/mcp {
			credential bearer {env.EDGEMCP_TEST_UP_TOKEN}
			header X-Tenant t1
			timeout 10s
			required
		}
	}
}`, streamable, sse, secured.URL))
	s := g.rawSession(t, "2025-06-18")
	for _, name := range []string{"ev_echo", "old_echo"} {
		if r := s.call(t, name, map[string]any{"message": "over http"}).tool(t); len(r.Content) != 1 || r.Content[0].Text != "Echo: over http" {
			t.Errorf("%s: %+v", name, r)
		}
	}
	if r := s.call(t, "ev_get-structured-content", map[string]any{"location": "New York"}).tool(t); string(r.StructuredContent["temperature"]) != "33" {
		t.Errorf("structuredContent over streamable HTTP: %+v", r)
	}
	// The upstream's JSON-RPC error reaches the caller as it was sent:
	// its code and message, no stage prefix (docs/caddyfile.md, Errors).
	r := s.call(t, "sec_fail", map[string]any{})
	if r.Error == nil || r.Error.Code != -32603 || r.Error.Message != "the disk is on fire" {
		t.Errorf("upstream JSON-RPC error: %+v", r.Error)
	}
	if got, _ := auth.Load().(string); got != "Bearer up-secret|t1" {
		t.Errorf("the secured server saw %q", got)
	}
	if r := s.call(t, "sec_meta", map[string]any{}); r.Error != nil || !strings.Contains(string(r.Result), `"_meta":{"trace":"abc"}`) {
		t.Errorf("_meta: %s %+v", r.Result, r.Error)
	}
}

// TestMCPSourceLoadErrors: a required server that cannot be started or
// reached fails the load naming the source; the Caddyfile refuses bad
// settings with the line.
func TestMCPSourceLoadErrors(t *testing.T) {
	for _, tc := range []struct{ cfg, want string }{
		{"source x mcp stdio /nonexistent/mcp-server {\n\t\t\trequired\n\t\t}", "/nonexistent/mcp-server"},
		{fmt.Sprintf("source x mcp http://127.0.0.1:%d/mcp {\n\t\t\trequired\n\t\t}", freePort(t)), "connection refused"},
	} {
		g := &gateway{t: t, port: freePort(t)}
		caddyMu.Lock()
		err := g.load("SITE {\n\tmcp /mcp {\n\t\t" + tc.cfg + "\n\t}\n}")
		_ = caddy.Stop()
		caddyMu.Unlock()
		if err == nil || !strings.Contains(err.Error(), `source "x"`) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	for _, tc := range []struct{ cfg, want string }{
		{"source x mcp", "usage: source <name> mcp stdio <command>"},
		{"source x mcp stdio", "usage: source <name> mcp stdio <command>"},
		{"source x mcp ftp://x", "not an http or https URL"},
		{"source x mcp stdio ./s {\n\t\t\tenv A\n\t\t}", "env needs a variable name and a value"},
		{"source x mcp stdio ./s {\n\t\t\trestart_backoff soon\n\t\t}", "restart_backoff"},
		{"source x mcp stdio ./s {\n\t\t\ttransport sse\n\t\t}", "transport is for HTTP servers"},
		{"source x mcp http://x {\n\t\t\tcwd /tmp\n\t\t}", "cwd is for stdio servers"},
		{"source x mcp http://x {\n\t\t\tretries 2\n\t\t}", `unrecognized sub-directive "retries"`},
		{"source x mcp http://x {\n\t\t\tcredential magic\n\t\t}", `unknown kind "magic"`},
		{"source x mcp http://x {\n\t\t\tcredential passthrough\n\t\t}", "credential passthrough takes the caller's secret"},
	} {
		got := adaptForTest(t, ":8080 {\n\tmcp {\n\t\t"+tc.cfg+"\n\t}\n}\n")
		if !strings.HasPrefix(got, "error: ") || !strings.Contains(got, tc.want) || !strings.Contains(got, "Caddyfile:") {
			t.Errorf("%q: %s, want an error with %q and the line", tc.cfg, got, tc.want)
		}
	}
}
