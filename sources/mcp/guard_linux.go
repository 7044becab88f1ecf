package mcp

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
)

// A stdio child must not outlive the gateway, even one killed by SIGKILL
// or the OOM killer, which runs no cleanup of its own. Linux sends a
// process a chosen signal when its parent dies (PR_SET_PDEATHSIG), but to
// that process only, and `npx -y` or `uvx` run the server as a grandchild,
// which would live on. So the gateway starts a guard, its own executable
// again (/proc/self/exe, with guardName as argv[0]), as the leader of the
// child's process group: the guard starts the command and, on the
// parent-death signal, kills the whole group.
//
// The kernel sends that signal when the *thread* that started the process
// ends, not the process (go.dev/issue/27505), and Go ends a thread when a
// goroutine locked to it returns. So every child is started from one
// goroutine locked to its thread that never returns (spawner).
//
// Cost: the guard is a process of the gateway's binary, idle while the
// command runs: about 10 MB of private memory, and the binary's package
// initialization (some 60 ms) at each start of the child.

// guardName is the guard's argv[0].
const guardName = "edgemcp-stdio-guard"

// guardSignal is the guard's parent-death signal: hangup, which the
// gateway does not otherwise send (it stops a child with SIGTERM, then
// SIGKILL).
const guardSignal = syscall.SIGHUP

func init() {
	if len(os.Args) >= 2 && os.Args[0] == guardName {
		// Nothing to flush: syscall.Exit spares a race-enabled build
		// os.Exit's wait for late race reports (a second per child).
		syscall.Exit(guard(os.Args[1], os.Args[2:]))
	}
}

// startChild starts cmd under a guard, in a process group of its own.
func startChild(cmd *exec.Cmd) error {
	if cmd.Err != nil {
		return cmd.Err // not found on PATH
	}
	cmd.Args = append([]string{guardName, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/proc/self/exe"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: guardSignal}
	spawnOnce.Do(func() { go spawner() })
	done := make(chan error, 1)
	spawns <- spawnRequest{cmd, done}
	return <-done
}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan<- error
}

var (
	spawnOnce sync.Once
	spawns    = make(chan spawnRequest)
)

// spawner starts the children on a thread that lives as long as the
// gateway: it is locked to this goroutine, which never returns.
func spawner() {
	runtime.LockOSThread()
	for r := range spawns {
		r.done <- r.cmd.Start()
	}
}

// guard runs in the guard process: it starts the command on its own
// stdin, stdout and stderr, waits for it and exits with its status. When
// the gateway dies it kills its process group, the command's descendants
// and itself.
func guard(path string, args []string) int {
	died := make(chan os.Signal, 1)
	signal.Notify(died, guardSignal)
	// The gateway stops a child by signalling its group: the command gets
	// the signal too, and the guard waits for it to end.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", guardName, err)
		return 127
	}
	// The command holds the pipes now: the gateway sees them close when
	// the command closes them.
	_ = os.Stdin.Close()
	_ = os.Stdout.Close()
	// What the packages' init functions left behind (the guard is the
	// whole gateway binary) goes back to the system while the guard waits.
	debug.FreeOSMemory()
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	for {
		select {
		case <-done:
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return 128 + int(ws.Signal())
			}
			return cmd.ProcessState.ExitCode()
		case <-died:
			_ = syscall.Kill(0, syscall.SIGKILL)
		case <-stop:
		}
	}
}
