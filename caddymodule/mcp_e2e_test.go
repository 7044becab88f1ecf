package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
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

// procInfo is one process in /proc: its parent, process group and state.
type procInfo struct {
	pid, ppid, pgid int
	state           string
	cmdline         string
}

func processes(t *testing.T) []procInfo {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []procInfo
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+2:])
		f := strings.Fields(rest)
		if len(f) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgid, _ := strconv.Atoi(f[2])
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, procInfo{pid: pid, ppid: ppid, pgid: pgid, state: f[0], cmdline: strings.ReplaceAll(string(cmd), "\x00", " ")})
	}
	return out
}

// mcpChild is the pid of this process's child running server-everything
// (0 when there is none).
func mcpChild(t *testing.T) int {
	t.Helper()
	pid := 0
	for _, p := range processes(t) {
		if p.ppid == os.Getpid() && p.state != "Z" && strings.Contains(p.cmdline, "server-everything") {
			if pid != 0 {
				t.Fatalf("two server-everything children: %d and %d", pid, p.pid)
			}
			pid = p.pid
		}
	}
	return pid
}

// groupMembers counts the live processes of process group pgid.
func groupMembers(t *testing.T, pgid int) int {
	t.Helper()
	n := 0
	for _, p := range processes(t) {
		if p.pgid == pgid && p.state != "Z" {
			n++
		}
	}
	return n
}

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
	if n := groupMembers(t, child); n != 2 {
		t.Fatalf("the child's process group has %d live processes, want 2 (node and its sleep)", n)
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
