//go:build !linux

package mcp

import "os/exec"

// startChild starts cmd in a process group of its own. Without Linux's
// parent-death signal nothing stops it when the gateway is killed outright:
// its stdin then reaches its end, on which an MCP stdio server is expected
// to exit (README, Sources: MCP servers).
func startChild(cmd *exec.Cmd) error {
	ownGroup(cmd)
	return cmd.Start()
}
