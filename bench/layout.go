package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"golang.org/x/sys/unix"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// Where the parts of a run execute (-layout). shared: the load driver and
// the gateway in this process, against the Postgres of -pg. pinned (the
// performance issue's setup): a private Postgres and the gateway, in a
// child process running this same binary, on one CPU; the load driver (this
// process: MCP sessions, the HTTP client, the direct pgx loop) on another.
// Then the driver's CPU does not compete with the servers, and the
// direct pgx loop is measured against a server on the gateway's core.

// childEnv makes this binary the gateway child of the pinned layout.
const childEnv = "EDGEMCP_BENCH_GATEWAY_CHILD"

// pinned is the running pinned layout, nil in the shared one.
var pinned *pinnedLayout

type pinnedLayout struct {
	serverCPU, driverCPU int
	postgres             *testservices.Private
	child                *exec.Cmd
	childProcs           int // the child's GOMAXPROCS
	requests             *json.Encoder
	replies              *json.Decoder
	mu                   sync.Mutex // one request at a time
	restore              func()     // the driver's affinity and GOMAXPROCS before pinning
}

// startPinned starts the pinned layout, postgresArgs added to the private
// server's command line. The error says why it cannot run here.
func startPinned(postgresArgs ...string) (*pinnedLayout, error) {
	cpus, err := twoCPUs()
	if err != nil {
		return nil, err
	}
	l := &pinnedLayout{serverCPU: cpus[0], driverCPU: cpus[1]}
	onCPU := []string{"taskset", "-c", strconv.Itoa(l.serverCPU)}
	if l.postgres, err = testservices.RunPostgres(onCPU, postgresArgs...); err != nil {
		return nil, err
	}
	if err := l.startChild(onCPU); err != nil {
		l.close()
		return nil, err
	}
	if l.restore, err = pinThisProcess(l.driverCPU); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

// twoCPUs are the first two CPUs this process may run on, for the servers
// and for the driver; the error says why there are not two to pin to.
func twoCPUs() ([]int, error) {
	if _, err := exec.LookPath("taskset"); err != nil {
		return nil, errors.New("no taskset (util-linux)")
	}
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		return nil, err
	}
	var cpus []int
	for c := 0; c < 1024 && len(cpus) < 2; c++ {
		if allowed.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) < 2 {
		return nil, errors.New("fewer than 2 CPUs available")
	}
	return cpus, nil
}

// startChild starts the gateway child: requests on its stdin, replies on
// its fd 3, its errors on stderr; the first reply is its hello.
func (l *pinnedLayout) startChild(wrap []string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(wrap[0], append(wrap[1:], self)...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = os.Stderr
	// Its own process group (a Ctrl-C reaches this process only, which
	// stops the child), and SIGTERM if this process dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.ExtraFiles = []*os.File{w}
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		return err
	}
	l.child, l.requests, l.replies = cmd, json.NewEncoder(in), json.NewDecoder(r)
	var hello childReply
	if err := l.replies.Decode(&hello); err != nil {
		return fmt.Errorf("gateway child: %v", err)
	}
	l.childProcs = hello.Procs
	return nil
}

// do sends one request to the child and returns its reply.
func (l *pinnedLayout) do(op, arg string) childReply {
	l.mu.Lock()
	defer l.mu.Unlock()
	var rep childReply
	err := l.requests.Encode(childRequest{Op: op, Arg: arg})
	if err == nil {
		err = l.replies.Decode(&rep)
	}
	if err == nil && rep.Err != "" {
		err = errors.New(rep.Err)
	}
	check(err)
	return rep
}

// close stops the child (its stdin closed: it stops Caddy and exits) and
// the private Postgres, and gives this process its CPUs back.
func (l *pinnedLayout) close() {
	if l.child != nil {
		if c, ok := l.child.Stdin.(interface{ Close() error }); ok {
			_ = c.Close()
		}
		exited := make(chan struct{})
		go func() { _ = l.child.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = l.child.Process.Kill()
			<-exited
		}
		l.child = nil
	}
	if l.postgres != nil {
		l.postgres.Close()
		l.postgres = nil
	}
	if l.restore != nil {
		l.restore()
		l.restore = nil
	}
}

func (l *pinnedLayout) String() string {
	return fmt.Sprintf("layout pinned (gateway, GOMAXPROCS %d, and a private Postgres on CPU %d; driver, GOMAXPROCS %d, on CPU %d)",
		l.childProcs, l.serverCPU, runtime.GOMAXPROCS(0), l.driverCPU)
}

// layoutName is the header's account of the layout.
func layoutName() string {
	if pinned != nil {
		return pinned.String()
	}
	return fmt.Sprintf("layout shared (driver and gateway in one process, GOMAXPROCS %d)", runtime.GOMAXPROCS(0))
}

// pinThisProcess binds every thread of this process to cpu (threads
// created later inherit it) and sets GOMAXPROCS to 1; the returned
// function undoes both.
func pinThisProcess(cpu int) (func(), error) {
	var before, one unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		return nil, err
	}
	one.Set(cpu)
	if err := setAllThreads(&one); err != nil {
		_ = setAllThreads(&before)
		return nil, err
	}
	procs := runtime.GOMAXPROCS(1)
	return func() {
		runtime.GOMAXPROCS(procs)
		_ = setAllThreads(&before)
	}, nil
}

// setAllThreads sets the affinity of each thread in /proc/self/task, twice
// over: a thread started during the first pass by an unpinned one is
// caught by the second.
func setAllThreads(set *unix.CPUSet) error {
	for range 2 {
		tids, err := filepath.Glob("/proc/self/task/[0-9]*")
		if err != nil {
			return err
		}
		for _, t := range tids {
			tid, _ := strconv.Atoi(filepath.Base(t))
			if err := unix.SchedSetaffinity(tid, set); err != nil && !errors.Is(err, unix.ESRCH) {
				return err
			}
		}
	}
	return nil
}

// The child's protocol: one JSON request per line on its stdin, one JSON
// reply per request on fd 3 (stdout and stderr stay Caddy's).
type childRequest struct {
	Op  string // load (Arg: Caddyfile), sample, profile (Arg: path), endprofile, allocs (Arg: path)
	Arg string
}

type childReply struct {
	Err      string `json:",omitempty"`
	Procs    int    `json:",omitempty"` // hello: GOMAXPROCS
	CPU      int64  `json:",omitempty"` // sample: nanoseconds
	Mallocs  uint64 `json:",omitempty"`
	Syscalls int64  `json:",omitempty"`
}

// serveChild is the gateway child's main: it serves its requests until
// its stdin closes or SIGTERM.
func serveChild() {
	replies := json.NewEncoder(os.NewFile(3, "replies"))
	stop := func(code int) {
		pprof.StopCPUProfile()
		_ = caddy.Stop()
		os.Exit(code)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() { <-term; stop(1) }()
	_ = replies.Encode(childReply{Procs: runtime.GOMAXPROCS(0)})
	requests := json.NewDecoder(os.Stdin)
	for {
		var req childRequest
		if err := requests.Decode(&req); err != nil {
			stop(0)
		}
		var rep childReply
		var err error
		switch req.Op {
		case "load":
			err = loadCaddyfile(req.Arg)
		case "sample":
			s := processSample()
			rep.CPU, rep.Mallocs, rep.Syscalls = int64(s.cpu), s.mallocs, s.syscalls
		case "profile":
			err = startCPUProfile(req.Arg)
		case "endprofile":
			pprof.StopCPUProfile()
		case "allocs":
			err = writeAllocs(req.Arg)
		default:
			err = fmt.Errorf("unknown request %q", req.Op)
		}
		if err != nil {
			rep.Err = err.Error()
		}
		_ = replies.Encode(rep)
	}
}

// loadCaddyfile (re)loads the Caddy of this process from a Caddyfile.
func loadCaddyfile(src string) error {
	cfg, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(src), nil)
	if err != nil {
		return err
	}
	return caddy.Load(cfg, true)
}

// startCPUProfile starts a CPU profile of the gateway's process to path.
func startCPUProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return pprof.StartCPUProfile(f) // the file stays open while profiling
}

// writeAllocs writes the allocation profile so far: the scenario's own
// allocations are `go tool pprof -base <before> <after>`.
func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("allocs").WriteTo(f, 0)
}

// The gateway's profiles, in whichever process it runs.
func gatewayProfile(path string) {
	if pinned != nil {
		pinned.do("profile", absPath(path))
		return
	}
	check(startCPUProfile(path))
}

func gatewayEndProfile() {
	if pinned != nil {
		pinned.do("endprofile", "")
		return
	}
	pprof.StopCPUProfile()
}

func gatewayAllocs(path string) {
	if pinned != nil {
		pinned.do("allocs", absPath(path))
		return
	}
	check(writeAllocs(path))
}

func absPath(p string) string {
	a, err := filepath.Abs(p)
	check(err)
	return a
}

// atExit runs at the end of the program, also when it ends by check or
// by Ctrl-C (cleanups of servers and directories).
var atExit struct {
	sync.Mutex
	fns []func()
}

func onExit(fn func()) {
	atExit.Lock()
	defer atExit.Unlock()
	atExit.fns = append(atExit.fns, fn)
}

// exit runs the onExit functions, last first, and exits.
func exit(code int) {
	atExit.Lock()
	fns := atExit.fns
	atExit.fns = nil
	atExit.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
	os.Exit(code)
}

// exitOnInterrupt makes SIGINT and SIGTERM run the onExit functions.
func exitOnInterrupt() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sig
		fmt.Fprintln(os.Stderr, "bench: interrupted, stopping the servers")
		exit(130)
	}()
}
