//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that stopping it
// reaches the processes it starts too.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func terminateGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGTERM) }

func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

// groupAlive reports whether any process of the group is left.
func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
