package mcp

import (
	"errors"

	"golang.org/x/sys/unix"
)

// waitExit blocks until the child pid has exited, without reaping it (the
// transport's Close reaps it).
func waitExit(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// hasExited reports whether the child pid has exited (or was reaped).
func hasExited(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
	return err != nil || info.Signo != 0
}
