package mcp

import (
	"os"
	"os/exec"
)

// Windows has no process groups to signal: the child alone is stopped
// (the transport closes its stdin, then kills it).

func ownGroup(*exec.Cmd) {}

func terminateGroup(int) {}

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func groupAlive(int) bool { return false }

// waitExit is not known without reaping on Windows: a child that exited
// is noticed by the next call, whose request fails to be written.
func waitExit(int) { select {} }

func hasExited(int) bool { return false }
