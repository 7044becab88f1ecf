//go:build unix && !linux

package mcp

import (
	"syscall"
	"time"
)

// waitExit waits until the child pid is gone. Without waitid's WNOWAIT a
// child that exited stays a zombie until the transport reaps it, so this
// only sees children reaped by a failed call.
func waitExit(pid int) {
	for !hasExited(pid) {
		time.Sleep(time.Second)
	}
}

// hasExited reports whether no process pid is left.
func hasExited(pid int) bool { return syscall.Kill(pid, 0) != nil }
