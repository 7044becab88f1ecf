package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestPinnedLayout starts the pinned layout (a private Postgres and the
// gateway child on one CPU, this process on another), makes one call of
// each limits case and one through the scale and overload gateway, takes
// a cost sample, and stops it: the child, the postmaster and its backends
// must be gone and the data directory removed. Skipped without taskset or
// PostgreSQL's server binaries.
func TestPinnedLayout(t *testing.T) {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("no taskset (util-linux) for the pinned layout")
	}
	childrenBefore := childrenOf(os.Getpid())
	l, err := startPinned("-c", "max_connections=50")
	if errors.Is(err, testservices.ErrNoPostgres) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	pinned = l
	defer func() {
		if pinned != nil {
			pinned.close()
			pinned = nil
		}
	}()
	postmaster, child := l.postgres.Pid(), l.child.Process.Pid
	dir, err := os.Readlink("/proc/" + strconv.Itoa(postmaster) + "/cwd") // the server runs in its directory
	if err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	dsn := l.postgres.URL
	db, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	err = setup(ctx, db, 100)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	rig := startLimits(ctx, dsn, 2, 100, 10, "2025-11-25", "")
	r := rand.New(rand.NewPCG(1, 2))
	a := sampleCost()
	for _, c := range rig.cases {
		if err := c.call(r); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	cs := costBetween(a, sampleCost(), len(rig.cases))
	if cs.driver < 0 || cs.postgres < 0 || cs.mallocs == 0 {
		t.Errorf("cost in the pinned layout: driver %v, postgres %v, gateway allocations %d; want all measured",
			cs.driver, cs.postgres, cs.mallocs)
	}
	backends := childrenOf(postmaster)
	if len(backends) == 0 {
		t.Error("no processes under the private postmaster")
	}
	rig.close()

	url := loadScaleGateway(freePort(), dsn, "max_concurrent 64", "max_waiting 4", "")
	if err := openSessions(ctx, url, "2025-11-25", 1)[0].callGetUser(ctx, 7); err != nil {
		t.Errorf("scale gateway: %v", err)
	}
	transport.CloseIdleConnections()

	pinned.close()
	pinned = nil
	for _, pid := range append(backends, postmaster, child) {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			t.Errorf("process %d (%s) still runs after the layout stopped", pid, comm(pid))
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the private Postgres's directory %s is still there (%v)", dir, err)
	}
	if after := childrenOf(os.Getpid()); len(after) != len(childrenBefore) {
		t.Errorf("children of the test: %v before, %v after", childrenBefore, after)
	}
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			n, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			out = append(out, n)
		}
	}
	return out
}

func comm(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b))
}

// TestProcCPU: a peer's CPU and system calls are read from /proc as
// this process's own are counted: CPU spent shows, in whole ticks.
func TestProcCPU(t *testing.T) {
	before := procCPU(os.Getpid())
	for start := time.Now(); time.Since(start) < 100*time.Millisecond; {
	}
	if got := procCPU(os.Getpid()) - before; got < 50*time.Millisecond {
		t.Errorf("procCPU grew by %v over 100ms of work", got)
	}
	if procSyscalls(os.Getpid()) < 0 {
		t.Error("procSyscalls of this process is unreadable")
	}
	if procCPU(-1) != 0 {
		t.Error("procCPU of no process is not 0")
	}
}
