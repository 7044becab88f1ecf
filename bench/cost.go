package main

import (
	"bufio"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// What a call costs the whole bench process (load generator and gateway,
// not Postgres): CPU time from getrusage, heap allocations from the
// runtime, and read/write system calls from /proc/self/io (Go's network
// I/O is read and write on the sockets; epoll and futex calls are not
// counted there). Scenarios of one run share the client code, so the
// differences between them are the server side's.

// costSample is a point in the process's life.
type costSample struct {
	cpu      time.Duration
	mallocs  uint64
	syscalls int64 // -1: /proc/self/io is not readable
}

func sampleCost() costSample {
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

// ioSyscalls is syscr+syscw of /proc/self/io.
func ioSyscalls() int64 {
	f, err := os.Open("/proc/self/io")
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
}

func (c *cost) add(a, b costSample, calls int) {
	c.calls += calls
	c.cpu += b.cpu - a.cpu
	c.mallocs += b.mallocs - a.mallocs
	if a.syscalls < 0 || c.syscalls < 0 {
		c.syscalls = -1
	} else {
		c.syscalls += b.syscalls - a.syscalls
	}
}

func (c *cost) String() string {
	if c.calls == 0 {
		return "no calls"
	}
	n := float64(c.calls)
	s := "CPU " + strconv.FormatFloat(float64(c.cpu.Microseconds())/n, 'f', 1, 64) + " µs/call, " +
		strconv.FormatFloat(float64(c.mallocs)/n, 'f', 0, 64) + " allocs/call"
	if c.syscalls >= 0 {
		s += ", " + strconv.FormatFloat(float64(c.syscalls)/n, 'f', 1, 64) + " read/write syscalls/call"
	}
	return s
}

// driveCost is drive plus the cost of its measured window (after drive's
// one-second warm-up): the process is sampled when the window opens and
// when it closes.
func driveCost(workers int, d time.Duration, fn func(*rand.Rand) error) (*stats, cost) {
	start := time.Now()
	samples := make(chan costSample, 2)
	go func() {
		time.Sleep(time.Until(start.Add(time.Second)))
		samples <- sampleCost()
		time.Sleep(time.Until(start.Add(time.Second + d)))
		samples <- sampleCost()
	}()
	st := drive(workers, d, fn)
	a, b := <-samples, <-samples
	var c cost
	c.add(a, b, len(st.lat)+st.errors)
	return st, c
}
