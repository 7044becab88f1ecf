package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// The peer row of the limits scenario (-peer-toolbox): Google's MCP
// Toolbox for Databases serving the DB tool's query on the same table, so
// that the performance issue's total-cost target (the gateway's plus
// Postgres's CPU per DB call against Toolbox's, in the same run) is
// measured beside the rest. The repository holds no peer code or binary:
// the flag names a Toolbox binary the user fetched (docs/benchmarks.md
// says how). In the pinned layout Toolbox runs on the gateway's CPU
// against the private Postgres, and its row's CPU is its own process's,
// sampled from /proc as Postgres's is.

// toolboxTool is the peer's tool name; its statement is the DB tool's.
const toolboxTool = "get-user"

// peerProcess is a peer server the bench started.
type peerProcess struct {
	url    string // its MCP endpoint
	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd.Wait returned (its output is all read)
	dir    string
}

// startToolbox runs bin on a free port, on the servers' CPU of the pinned
// layout, serving one postgres-sql tool against dsn (the private
// Postgres); it returns once the server answers.
func startToolbox(ctx context.Context, bin, dsn, version string) (*peerProcess, error) {
	if pinned == nil {
		return nil, errNoPeer
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("the Postgres URL: %w", err)
	}
	password, _ := u.User.Password()
	if password == "" {
		password = "unused" // Toolbox requires one; the bench's servers trust loopback
	}
	dir, err := os.MkdirTemp("", "edgemcp-bench-toolbox-")
	if err != nil {
		return nil, err
	}
	config := fmt.Sprintf(`kind: source
name: pg
type: postgres
host: %q
port: %s
database: %q
user: %q
password: %q
---
kind: tool
name: %s
type: postgres-sql
source: pg
description: Fetch a user by id
parameters:
- name: id
  type: integer
  description: the user's id
statement: SELECT id, name, email, created_at FROM edgemcp_bench.users WHERE id = $1
`, u.Hostname(), u.Port(), strings.TrimPrefix(u.Path, "/"), u.User.Username(), password, toolboxTool)
	file := filepath.Join(dir, "tools.yaml")
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		return nil, err
	}
	listen := freePort()
	cmd := exec.Command("taskset", "-c", strconv.Itoa(pinned.serverCPU), bin, "--config", file,
		"--port", strconv.Itoa(listen), "--address", "127.0.0.1",
		"--disable-version-check", "--disable-reload", "--log-level", "ERROR")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p := &peerProcess{url: fmt.Sprintf("http://127.0.0.1:%d/mcp", listen), cmd: cmd, exited: make(chan struct{}), dir: dir}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := openSession(ctx, p.url, toolboxProtocol(version)); err == nil {
			return p, nil
		}
		select {
		case <-p.exited:
		default:
			if time.Now().Before(deadline) {
				continue
			}
		}
		p.stop()
		return nil, fmt.Errorf("Toolbox did not start: %s", strings.TrimSpace(log.String()))
	}
}

// toolboxProtocol is the MCP version the peer's sessions negotiate: the
// gateway's own (version), except 2026-07-28, which Toolbox 1.12 serves
// only as a draft (--enable-draft-specs): then 2025-11-25.
func toolboxProtocol(version string) string {
	if mcp.IsModernProtocol(version) {
		return "2025-11-25"
	}
	return version
}

func (p *peerProcess) stop() {
	_ = p.cmd.Process.Kill()
	<-p.exited
	_ = os.RemoveAll(p.dir)
}

// sample is the peer's cost sample: its process's CPU and system calls,
// with Postgres's and the driver's as sampleCost takes them. It counts no
// allocations (mallocs stays 0; the row prints none).
func (p *peerProcess) sample() costSample {
	s := sampleCost()
	pid := p.cmd.Process.Pid
	s.cpu, s.mallocs, s.syscalls = procCPU(pid), 0, procSyscalls(pid)
	return s
}

// procCPU is the user and system CPU time of process pid, from
// /proc/<pid>/stat in clock ticks of 10 ms.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	end := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}

// procSyscalls is syscr+syscw of process pid, -1 when unreadable.
func procSyscalls(pid int) int64 {
	return ioSyscallsOf(fmt.Sprintf("/proc/%d/io", pid))
}

// errNoPeer: the peer row needs the pinned layout, where the gateway and
// the peer get the same CPU and Postgres.
var errNoPeer = errors.New("the Toolbox row needs the pinned layout (-layout pinned), where it gets the gateway's CPU and the private Postgres")
