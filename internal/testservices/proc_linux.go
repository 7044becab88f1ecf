package testservices

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Process is one process as /proc shows it, for the tests of what the
// gateway starts (stdio MCP servers).
type Process struct {
	PID, PPID, PGID int
	State           string // "Z" for a zombie
	Cmdline         string // the arguments, joined by spaces
}

// Processes lists the processes of the machine.
func Processes(t testing.TB) []Process {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []Process
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
		out = append(out, Process{PID: pid, PPID: ppid, PGID: pgid, State: f[0], Cmdline: strings.ReplaceAll(string(cmd), "\x00", " ")})
	}
	return out
}

// GroupMembers counts the live (not zombie) processes of process group
// pgid.
func GroupMembers(t testing.TB, pgid int) int {
	t.Helper()
	n := 0
	for _, p := range Processes(t) {
		if p.PGID == pgid && p.State != "Z" {
			n++
		}
	}
	return n
}
