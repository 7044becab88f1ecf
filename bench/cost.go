package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// What a call costs. In the shared layout (layout.go), the whole bench
// process (load generator and gateway, not Postgres): CPU time from
// getrusage, heap allocations from the runtime, and read/write system
// calls from /proc/self/io (Go's network I/O is read and write on the
// sockets; epoll and futex calls are not counted there). Scenarios of one
// run share the client code, so the differences between them are the
// server side's. When the Postgres server runs on this machine, its
// processes' CPU time is counted apart: it shares the cores, and the
// session reset is work done there. In the pinned layout the same three
// figures are the gateway child's own (the server side only), the
// Postgres CPU is the private server's, and the driver's CPU is counted
// apart.

// costSample is a point in the process's life.
type costSample struct {
	cpu      time.Duration
	mallocs  uint64
	syscalls int64         // -1: /proc/self/io is not readable
	postgres time.Duration // -1: no postgres process visible
	driver   time.Duration // -1: the driver is the process measured
}

func sampleCost() costSample {
	s := processSample()
	s.postgres, s.driver = -1, -1
	if pinned != nil {
		driver := s.cpu
		rep := pinned.do("sample", "")
		s = costSample{cpu: time.Duration(rep.CPU), mallocs: rep.Mallocs, syscalls: rep.Syscalls, driver: driver}
		s.postgres = postgresCPU(pinned.postgres.Pid())
	} else {
		s.postgres = postgresCPU(0)
	}
	return s
}

// processSample is this process's CPU time, allocations and system calls.
func processSample() costSample {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return costSample{
		cpu:      time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		mallocs:  m.Mallocs,
		syscalls: ioSyscalls(),
	}
}

// postgresCPU is the CPU time (user and system) of the processes named
// postgres (of the postmaster pid and its children if pid is not 0), from
// /proc/<pid>/stat, in clock ticks of 10 ms: coarse for one process, fine
// summed over thousands of calls.
func postgresCPU(postmaster int) time.Duration {
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	seen := false
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... utime is field 14, stime 15.
		open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || end < open || string(b[open+1:end]) != "postgres" {
			continue
		}
		f := strings.Fields(string(b[end+1:]))
		if len(f) < 13 {
			continue
		}
		if postmaster != 0 {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:open])))
			ppid, _ := strconv.Atoi(f[1])
			if pid != postmaster && ppid != postmaster {
				continue
			}
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + st
		seen = true
	}
	if !seen {
		return -1
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// ioSyscalls is syscr+syscw of /proc/self/io.
func ioSyscalls() int64 { return ioSyscallsOf("/proc/self/io") }

// ioSyscallsOf is syscr+syscw of an io file of /proc, -1 when unreadable.
func ioSyscallsOf(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	var n int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ": ")
		if k == "syscr" || k == "syscw" {
			x, _ := strconv.ParseInt(v, 10, 64)
			n += x
		}
	}
	return n
}

// cost is what the calls of a measured window cost together.
type cost struct {
	calls    int
	cpu      time.Duration
	mallocs  uint64
	syscalls int64
	postgres time.Duration // -1: not measured
	driver   time.Duration // -1: not measured apart
}

// costBetween is what the calls between samples a and b cost.
func costBetween(a, b costSample, calls int) cost {
	return cost{
		calls:    calls,
		cpu:      b.cpu - a.cpu,
		mallocs:  b.mallocs - a.mallocs,
		syscalls: diffKnown(b.syscalls, a.syscalls),
		postgres: time.Duration(diffKnown(int64(b.postgres), int64(a.postgres))),
		driver:   time.Duration(diffKnown(int64(b.driver), int64(a.driver))),
	}
}

// merge adds another window's cost.
func (c *cost) merge(o cost) {
	c.calls += o.calls
	c.cpu += o.cpu
	c.mallocs += o.mallocs
	c.syscalls = sumKnown(c.syscalls, o.syscalls)
	c.postgres = time.Duration(sumKnown(int64(c.postgres), int64(o.postgres)))
	c.driver = time.Duration(sumKnown(int64(c.driver), int64(o.driver)))
}

// diffKnown is b-a, -1 (not measured) if either is.
func diffKnown(b, a int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	return b - a
}

// sumKnown adds two measures, -1 (not measured) if either is.
func sumKnown(a, b int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	return a + b
}

func (c cost) cpuPerCall() float64 { return perCall(c.cpu, c.calls) }

// perCall is d per call in µs.
func perCall(d time.Duration, calls int) float64 {
	return float64(d.Microseconds()) / float64(max(calls, 1))
}

func (c cost) allocsPerCall() float64 { return float64(c.mallocs) / float64(max(c.calls, 1)) }

// syscallsPerCall is the read and write system calls per call, "" when
// they are not counted.
func (c cost) syscallsPerCall() string {
	if c.syscalls < 0 {
		return ""
	}
	return strconv.FormatFloat(float64(c.syscalls)/float64(max(c.calls, 1)), 'f', 1, 64)
}

// printCostRatio prints what a call cost on each side (the upstream and
// the load driver run in the process too, alike for both sides) and the
// ratio of the CPU per call, which unlike requests/s does not move with
// other work on the machine.
func printCostRatio(baseName string, base cost, name string, c cost) {
	fmt.Printf("%s: %s\n%s: %s\n", baseName, &base, name, &c)
	if base.calls > 0 && c.calls > 0 && c.cpu > 0 {
		fmt.Printf("CPU per call ratio %s/%s = %.2f\n", baseName, name, base.cpuPerCall()/c.cpuPerCall())
	}
}

func (c *cost) String() string {
	if c.calls == 0 {
		return "no calls"
	}
	n := float64(c.calls)
	s := "CPU "
	if c.driver >= 0 {
		s = "gateway CPU "
	}
	s += strconv.FormatFloat(c.cpuPerCall(), 'f', 1, 64) + " µs/call, " +
		strconv.FormatFloat(c.allocsPerCall(), 'f', 0, 64) + " allocs/call"
	if c.syscalls >= 0 {
		s += ", " + strconv.FormatFloat(float64(c.syscalls)/n, 'f', 1, 64) + " read/write syscalls/call"
	}
	if c.postgres >= 0 {
		s += ", Postgres CPU " + strconv.FormatFloat(perCall(c.postgres, c.calls), 'f', 1, 64) + " µs/call"
	}
	if c.driver >= 0 {
		s += ", driver CPU " + strconv.FormatFloat(perCall(c.driver, c.calls), 'f', 1, 64) + " µs/call"
	}
	return s
}

// driveCost is drive plus the cost of its measured window (after drive's
// one-second warm-up): the process is sampled when the window opens and
// when it closes.
func driveCost(workers int, d time.Duration, fn func(*rand.Rand) error) (*stats, cost) {
	return driveCostOf(sampleCost, workers, d, fn)
}

// driveCostOf is driveCost with the server sampled by sample (a peer's
// process, peerProcess.sample).
func driveCostOf(sample func() costSample, workers int, d time.Duration, fn func(*rand.Rand) error) (*stats, cost) {
	start := time.Now()
	samples := make(chan costSample, 2)
	go func() {
		time.Sleep(time.Until(start.Add(time.Second)))
		samples <- sample()
		time.Sleep(time.Until(start.Add(time.Second + d)))
		samples <- sample()
	}()
	st := drive(workers, d, fn)
	a, b := <-samples, <-samples
	return st, costBetween(a, b, len(st.lat)+st.errors)
}
