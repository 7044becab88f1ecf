//go:build linux

package mcp

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// serveTestGateway is the test binary as a gateway (EDGEMCP_MCP_TEST_GATEWAY=1):
// it provisions a stdio source whose command, like `npx -y`, starts the
// server as a grandchild (a shell that leaves a sleep behind and runs the
// test binary's server), prints the process group of the child, and waits
// to be killed.
func serveTestGateway() {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	s := &Source{Transport: TransportStdio, Command: "/bin/sh",
		Args: []string{"-c", `sleep 3600 & exec "$0" -test.run=^$`, exe},
		Env:  map[string]string{"EDGEMCP_MCP_TEST_SERVER": "1"}}
	ctx, _ := caddy.NewContext(caddy.Context{Context: context.Background()})
	if err := s.Provision(ctx); err != nil {
		panic(err)
	}
	fmt.Println(s.conn.current().cmd.Process.Pid) // the leader of the child's group
	select {}
}

// TestStdioChildDiesWithGateway: a gateway killed with SIGKILL (as the OOM
// killer does) leaves nothing of its stdio child behind: not the child,
// not the processes the child started (its whole process group). Before
// the guard, the child outlived it.
func TestStdioChildDiesWithGateway(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	gw := exec.Command(exe, "-test.run=^$")
	gw.Env = append(os.Environ(), "EDGEMCP_MCP_TEST_GATEWAY=1")
	out, err := gw.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Process.Kill(); _ = gw.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	pgid, _ := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pgid <= 1 {
		t.Fatalf("the gateway printed %q (%v)", line, err)
	}
	// The server and the sleep the shell left (and the guard).
	if n := testservices.GroupMembers(t, pgid); n < 2 {
		t.Fatalf("the child's process group has %d live processes, want the server and its sleep", n)
	}
	if err := gw.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = gw.Wait()
	waitUntil(t, "the child's process group to end with the gateway", func() bool { return testservices.GroupMembers(t, pgid) == 0 })
}
