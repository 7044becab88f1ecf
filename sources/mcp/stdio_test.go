//go:build unix

package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/pipeline"
)

// The test binary is also a stdio MCP server: started with
// EDGEMCP_MCP_TEST_SERVER=1 it serves "pid" (its process id), "env" (its
// environment, a NAME=value a line), "big" (an answer of "bytes" bytes:
// bigText), "die"
// (which notes the call in the file EDGEMCP_MCP_TEST_CALLS, then exits
// before it answers) and "wait" (which notes "waiting", and "cancelled"
// when its client cancels it).
func TestMain(m *testing.M) {
	if os.Getenv("EDGEMCP_MCP_TEST_SERVER") == "1" {
		serveTestServer()
		return
	}
	if os.Getenv("EDGEMCP_MCP_TEST_GATEWAY") == "1" {
		serveTestGateway()
		return
	}
	os.Exit(m.Run())
}

func serveTestServer() {
	s := server.NewMCPServer("child", "1")
	s.AddTool(mcp.NewTool("pid"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(fmt.Sprint(os.Getpid())), nil
	})
	s.AddTool(mcp.NewTool("env"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(strings.Join(os.Environ(), "\n")), nil
	})
	s.AddTool(mcp.NewTool("big", mcp.WithNumber("bytes")), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(bigText(req.GetInt("bytes", 0))), nil
	})
	s.AddTool(mcp.NewTool("die"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f, err := os.OpenFile(os.Getenv("EDGEMCP_MCP_TEST_CALLS"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			_, _ = f.WriteString("die\n")
			_ = f.Close()
		}
		os.Exit(3)
		return nil, nil
	})
	s.AddTool(mcp.NewTool("wait"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		note("waiting")
		<-ctx.Done()
		note("cancelled")
		return nil, ctx.Err()
	})
	_ = server.ServeStdio(s)
	os.Exit(0)
}

// note appends line to the calls file.
func note(line string) {
	f, err := os.OpenFile(os.Getenv("EDGEMCP_MCP_TEST_CALLS"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err == nil {
		_, _ = f.WriteString(line + "\n")
		_ = f.Close()
	}
}

func stdioSource(t *testing.T, backoff time.Duration) (*Source, string) {
	t.Helper()
	calls := t.TempDir() + "/calls"
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := &Source{Transport: TransportStdio, Command: exe, Args: []string{"-test.run=^$"},
		Env:            map[string]string{"EDGEMCP_MCP_TEST_SERVER": "1", "EDGEMCP_MCP_TEST_CALLS": calls},
		RestartBackoff: caddy.Duration(backoff)}
	return s, calls
}

func text(t *testing.T, res map[string]any) string {
	t.Helper()
	c, _ := res["content"].([]any)
	if len(c) != 1 {
		t.Fatalf("result %v", res)
	}
	return c[0].(map[string]any)["text"].(string)
}

// TestStdioCallRestartsDeadChild: a call to a child that was killed
// starts it again and is sent to the new one, even when the background
// restart is far off (restart_backoff 1h).
func TestStdioCallRestartsDeadChild(t *testing.T) {
	s, _ := stdioSource(t, time.Hour)
	provision(t, s)
	tools, _ := s.Tools("c")
	res, err := call(t, tools, "c_pid", nil)
	if err != nil {
		t.Fatal(err)
	}
	pid := 0
	fmt.Sscan(text(t, res), &pid)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The server may run under a guard (startChild): it is gone once no
	// process has its pid.
	waitUntil(t, "the child to exit", func() bool { return syscall.Kill(pid, 0) != nil })
	res, err = call(t, tools, "c_pid", nil)
	if err != nil {
		t.Fatalf("after SIGKILL: %v", err)
	}
	if got := text(t, res); got == fmt.Sprint(pid) || got == "" {
		t.Errorf("answered by %s, the killed child was %d", got, pid)
	}
}

// TestStdioCallNotRepeatedAfterSent: a child that dies while it runs a
// call fails that call, which is never sent again (the child saw it once).
func TestStdioCallNotRepeatedAfterSent(t *testing.T) {
	s, calls := stdioSource(t, time.Hour)
	provision(t, s)
	tools, _ := s.Tools("c")
	_, err := call(t, tools, "c_die", nil)
	var safe pipeline.SafeError
	if err == nil || !errors.As(err, &safe) || !strings.Contains(safe.SafeMessage(), "failed during the call") {
		t.Errorf("die: %v", err)
	}
	if b, _ := os.ReadFile(calls); string(b) != "die\n" {
		t.Errorf("the child ran die %d times", strings.Count(string(b), "die"))
	}
	// The next call gets a new child.
	if _, err := call(t, tools, "c_pid", nil); err != nil {
		t.Errorf("after the crash: %v", err)
	}
}

// TestStdioCancelReachesServer: a call whose caller goes away (the
// downstream client's notifications/cancelled ends its context) is
// cancelled at the server too, with notifications/cancelled: over stdio
// there is no other way to tell it.
func TestStdioCancelReachesServer(t *testing.T) {
	s, calls := stdioSource(t, time.Hour)
	provision(t, s)
	tools, _ := s.Tools("c")
	var wait *pipeline.Tool
	for _, tl := range tools {
		if tl.Name == "c_wait" {
			wait = tl
		}
	}
	if wait == nil || !wait.Interactive {
		t.Fatalf("c_wait: %+v", wait)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := wait.Executor.Execute(ctx, &pipeline.Call{Tool: wait})
		done <- err
	}()
	noted := func(s string) func() bool {
		return func() bool { b, _ := os.ReadFile(calls); return strings.Contains(string(b), s) }
	}
	waitUntil(t, "the server to run the call", noted("waiting\n"))
	cancel()
	if err := <-done; err == nil {
		t.Error("a cancelled call succeeded")
	}
	waitUntil(t, "the server to see the cancellation", noted("cancelled\n"))
	// The session goes on.
	if _, err := call(t, tools, "c_pid", nil); err != nil {
		t.Errorf("after the cancellation: %v", err)
	}
}
