package mcp

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"go.uber.org/zap"
)

// A stdio source's child process (README, Sources: MCP servers): what it
// is given (childEnv), how it is started (startChild: in a process group of
// its own, which does not outlive the gateway where the system allows) and
// stopped (stopChild), and its output read within max_response_size
// (framedBound).

// baseEnv is what a child takes from the gateway's environment without
// inherit_env: what programs (npx, uvx, interpreters) need to run, find
// their files and speak the locale. Nothing else passes, since a gateway's
// environment holds its secrets (session_key, database URLs, tokens) and
// `npx -y` runs third-party code. A trailing * matches a prefix.
var baseEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ", "LANG", "LANGUAGE", "LC_*"}

// windowsEnv is what Windows programs (node among them) fail without.
var windowsEnv = []string{"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP",
	"USERPROFILE", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES"}

// childEnv is a child's environment: the variables of parent that baseEnv
// or inherit name, then set (NAME=value), which wins.
func childEnv(parent, inherit, set []string) []string {
	pass := slices.Concat(baseEnv, inherit)
	if runtime.GOOS == "windows" {
		pass = append(pass, windowsEnv...)
	}
	given := make([]string, len(set))
	for i, kv := range set {
		given[i], _, _ = strings.Cut(kv, "=")
	}
	var env []string
	for _, kv := range parent {
		name, _, _ := strings.Cut(kv, "=")
		if name != "" && envNamed(pass, name) && !envNamed(given, name) {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}

// envNamed reports whether names (NAME, or PREFIX* for a prefix) hold
// name; Windows variable names ignore case.
func envNamed(names []string, name string) bool {
	same := func(a, b string) bool { return a == b }
	if runtime.GOOS == "windows" {
		same = strings.EqualFold
	}
	for _, n := range names {
		if p, prefix := strings.CutSuffix(n, "*"); prefix && len(name) >= len(p) && same(name[:len(p)], p) || same(n, name) {
			return true
		}
	}
	return false
}

// checkEnvName refuses an inherit_env entry that names no variable.
func checkEnvName(n string) error {
	base := strings.TrimSuffix(n, "*")
	if base == "" || strings.ContainsAny(base, "=*") {
		return fmt.Errorf("inherit_env %q: want a variable name, or a prefix ending in *", n)
	}
	return nil
}

// connectStdio starts the child and runs the handshake. The child is not
// tied to ctx, which only bounds the handshake.
func (c *conn) connectStdio(ctx context.Context) (*session, error) {
	set := c.set
	cmd := exec.Command(set.command, set.args...)
	cmd.Env = set.env
	cmd.Dir = set.dir
	cmd.Stderr = &lineLogger{log: c.log.With(zap.String("server", set.command))}
	// A grandchild that keeps stderr open does not hold up reaping.
	cmd.WaitDelay = stopGrace
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := startChild(cmd); err != nil {
		return nil, err
	}
	s := &session{cmd: cmd, start: time.Now()}
	out := newFramedBound(stdout, set.maxResponse, false, c.log.With(zap.String("server", set.command)))
	// The end of its output is the end of the child's answers (under the
	// guard, which outlives it a little, it comes before its exit).
	out.ended = func() { s.broken.Store(true) }
	s.tr = transport.NewIO(out, countedWriter{stdin, &s.written}, nil)
	if err := s.tr.Start(context.Background()); err != nil {
		s.close()
		return nil, err
	}
	if err := s.initialize(ctx, c); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// stopChild ends a stdio session's child: its stdin is closed and its
// process group gets SIGTERM; whatever is left of it after stopGrace gets
// SIGKILL; the child is reaped.
func (s *session) stopChild() {
	pgid := s.cmd.Process.Pid
	terminateGroup(pgid)
	done := make(chan struct{})
	go func() {
		_ = s.tr.Close() // closes the child's stdin
		_ = s.cmd.Wait()
		close(done)
	}()
	grace := time.NewTimer(stopGrace)
	defer grace.Stop()
	expired := false
	select {
	case <-done:
	case <-grace.C:
		expired = true
	}
	// What is left of the group (the child's own children) has until the
	// end of the grace period.
	for !expired && groupAlive(pgid) {
		select {
		case <-grace.C:
			expired = true
		case <-time.After(20 * time.Millisecond):
		}
	}
	if expired || groupAlive(pgid) {
		killGroup(pgid)
		select {
		case <-done:
		default:
			_ = s.cmd.Process.Kill() // where there is no group to signal
		}
	}
	<-done
}

// countedWriter counts the writes to a child's stdin: a request that the
// transport failed as closed was not sent when nothing was written
// meanwhile (request).
type countedWriter struct {
	io.WriteCloser
	n *atomic.Int64
}

func (w countedWriter) Write(p []byte) (int, error) {
	w.n.Add(1)
	return w.WriteCloser.Write(p)
}
