// Command bench is edgemcp's load driver. In one run it measures a DB-backed
// tool served by the real Caddy module to real MCP sessions (mcp-go's
// streamable HTTP client), and a direct pgx loop running the same query at
// the same concurrency, then prints requests/s, p50/p99/max and the ratio.
//
//	go run ./bench -clients 32 -duration 10s
//	go run ./bench -scenario cache -clients 32 -duration 10s   (cachehit.go)
//	go run ./bench -scenario openapi|openapi-spec|openapi-cache -duration 5s  (openapi.go)
//	go run ./bench -scenario mcp -clients 32 -duration 10s  (mcpproxy.go)
//	go run ./bench -scenario soak -duration 5m  (soak.go)
//	go run ./bench -scenario terminate -clients 16 -duration 15s  (terminate.go)
//	go run ./bench -scenario sessions -sessions 10000 -max_sessions 1000  (sessions.go)
//	go run ./bench -scenario limits -clients 32 -duration 9s  (limits.go)
//	go run ./bench -scenario scale|overload -duration 3s  (scale.go)
//	go run ./bench -scenario bigtools|bigresult -duration 3s  (bigtools.go)
//	go run ./bench -scenario reset  (resetcost.go)
//
// The gateway runs in this process (caddy.Load of a Caddyfile, as
// `caddy run` does) unless -url points at a running one; limits, scale
// and overload run it in a child process pinned to one CPU with a private
// Postgres, the driver on another (-layout, layout.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	"github.com/jackc/pgx/v5/pgxpool"

	_ "github.com/edgemcp/edgemcp" // the module and its built-in connectors and sources
)

const query = "SELECT id, name, email, created_at FROM edgemcp_bench.users WHERE id = $1"

func main() {
	if os.Getenv(childEnv) != "" {
		serveChild()
		return
	}
	dsn := flag.String("pg", envOr("EDGEMCP_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"), "Postgres DSN")
	clients := flag.Int("clients", 32, "concurrent clients (MCP sessions and pgx goroutines)")
	duration := flag.Duration("duration", 10*time.Second, "measuring time per side")
	rows := flag.Int("rows", 10000, "rows in the benchmark table")
	readOnly := flag.Bool("read_only", false, "serve the tool from a read_only connector")
	url := flag.String("url", "", "measure a running gateway's get-user tool instead of starting one")
	version := flag.String("protocol", "2025-11-25", "MCP protocol version the sessions negotiate")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the gateway phase to this file")
	scenario := flag.String("scenario", "db", "db: gateway vs direct pgx; cache: cache hits vs Caddy's respond (cachehit.go); openapi: an OpenAPI tool vs Caddy's reverse_proxy; openapi-spec: a large document as a source; openapi-cache: cached OpenAPI tool vs Caddy's respond (openapi.go); mcp: an upstream MCP tool through an MCP source vs called directly (mcpproxy.go); sessions: memory per idle session (sessions.go); limits: every scenario against its limit in one run, with CPU, allocations and syscalls per call (limits.go); scale: the DB tool from 1 to 256 clients; overload: the DB tool at twice its capacity, open loop (scale.go); bigtools: tools/list of 10,000 tools; bigresult: 10,000-row results (bigtools.go); terminate: the DB tool while its backends are terminated (terminate.go); soak: mixed tools for -duration, fails if goroutines, heap, files or connections grow (soak.go); reset: Postgres's CPU per call of the query alone and with each way of resetting the session, on a private server (resetcost.go)")
	sessions := flag.Int("sessions", 10000, "sessions scenario: idle sessions to open")
	maxSessions := flag.Int("max_sessions", 1000, "sessions scenario: the bound of the second run")
	spec := flag.String("spec", defaultSpec(), "openapi-spec scenario: the document to load")
	hot := flag.Int("hot", 100, "cache scenario: distinct keys called")
	scripts := flag.Bool("scripts", false, "run the script scenarios (scripts.go) instead")
	resetCalls := flag.Int("calls", 2000, "reset scenario: calls per side and round")
	layout := flag.String("layout", "", "limits, scale, overload: pinned (gateway and a private Postgres on one CPU, the driver on another; the default with 2 CPUs, taskset and PostgreSQL's server binaries) or shared (all in this process, Postgres of -pg) (layout.go)")
	toolbox := flag.String("peer-toolbox", "", "limits: also measure Google's MCP Toolbox for Databases, this binary of it, serving the same query (peer.go; docs/benchmarks.md)")
	flag.Parse()
	exitOnInterrupt()

	ctx := context.Background()
	switch *scenario { // no database needed
	case "openapi":
		runOpenAPIBench(ctx, *clients, *duration, *version, *cpuProfile)
		return
	case "openapi-spec":
		runSpecBench(ctx, *spec, *duration, *version, *cpuProfile)
		return
	case "openapi-cache":
		runOpenAPICacheBench(ctx, *clients, *duration, *hot, *version, *cpuProfile)
		return
	case "mcp":
		runMCPProxyBench(ctx, *clients, *duration, *version, *cpuProfile)
		return
	case "sessions":
		runSessionsBench(ctx, *sessions, *maxSessions, *version)
		return
	case "reset":
		runResetBench(ctx, *resetCalls)
		exit(0) // stops the private Postgres
	}
	if *scenario == "bigresult" {
		*rows = max(*rows, 10001) // one call over max_rows
	}
	switch *scenario {
	case "limits", "scale", "overload":
		*dsn = chooseLayout(*layout, *dsn)
	default:
		if *layout == "pinned" {
			check(fmt.Errorf("-layout pinned is for the limits, scale and overload scenarios"))
		}
	}
	db, err := pgxpool.New(ctx, *dsn)
	check(err)
	check(setup(ctx, db, *rows))
	if *scenario == "terminate" {
		runTerminateBench(ctx, *dsn, *clients, *duration, *rows, *version)
		return
	}
	if *scenario == "soak" {
		if err := runSoak(ctx, *dsn, min(*clients, 8), *duration, *version, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if *scenario == "cache" {
		runCacheBench(ctx, *dsn, *clients, *duration, min(*hot, *rows), *version, *cpuProfile)
		return
	}
	switch *scenario {
	case "scale":
		runScaleBench(ctx, *dsn, *duration, *rows, *version)
		exit(0) // stops the pinned layout
	case "overload":
		runOverloadBench(ctx, *dsn, *duration, *rows, *version)
		exit(0) // stops the pinned layout
	case "bigtools":
		runBigToolsBench(ctx, *dsn, *duration, *version)
		return
	case "bigresult":
		runBigResultBench(ctx, *dsn, *duration, *rows, *version)
		return
	case "limits":
		runLimitsBench(ctx, *dsn, *clients, *duration, *rows, min(*hot, *rows), *version, *cpuProfile, *toolbox)
		exit(0) // stops the pinned layout
	}
	if *scripts {
		runScriptBench(ctx, *dsn, *clients, *duration, *rows, *version)
		return
	}

	if *url == "" {
		*url = startGateway(*dsn, *clients, *readOnly)
		defer caddy.Stop()
	}

	fmt.Printf("edgemcp bench: %d clients, %s per side, %d rows, read_only=%v, GOMAXPROCS=%d\n",
		*clients, *duration, *rows, *readOnly, runtime.GOMAXPROCS(0))

	raw := runRaw(ctx, *dsn, *clients, *duration, *rows)
	raw.print("direct pgx loop")
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		check(err)
		check(pprof.StartCPUProfile(f))
	}
	gw := runGateway(ctx, *url, *clients, *duration, *rows, *version)
	pprof.StopCPUProfile()
	gw.print("edgemcp tools/call")
	fmt.Printf("ratio: gateway/pgx = %.2f (target ≥ 0.25); slowest gateway call %s (target ≤ 100ms)\n",
		gw.rps()/raw.rps(), gw.max())
}

func setup(ctx context.Context, db *pgxpool.Pool, rows int) error {
	for _, s := range []string{
		`CREATE SCHEMA IF NOT EXISTS edgemcp_bench`,
		`DROP TABLE IF EXISTS edgemcp_bench.users`,
		`CREATE TABLE edgemcp_bench.users (id int8 PRIMARY KEY, name text, email text, created_at timestamptz)`,
		fmt.Sprintf(`INSERT INTO edgemcp_bench.users SELECT i, 'user ' || i, 'user' || i || '@example.com',
			'2024-01-01'::timestamptz + i * interval '1 minute' FROM generate_series(1, %d) i`, rows),
		`ANALYZE edgemcp_bench.users`,
	} {
		if _, err := db.Exec(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

func startGateway(dsn string, clients int, readOnly bool) string {
	ro := ""
	if readOnly {
		ro = "read_only"
	}
	return loadSite(freePort(), fmt.Sprintf(`	mcp /mcp {
		connector main postgres %s {
			max_conns %d
			%s
		}
%s	}`, dsn, clients, ro, getUserTool(""))) + "/mcp"
}

// getUserTool is the point lookup every scenario measures, with extra
// sub-directives (a cache line, say).
func getUserTool(extra string) string {
	return `		tool get-user {
			description "Fetch a user by id"
			use main
			statement "SELECT id, name, email, created_at FROM edgemcp_bench.users WHERE id = {{ inputs.id }}"
			input id int required
			` + extra + `
		}
`
}

// freePort returns a loopback port nobody listens on.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// loadSite (re)loads the gateway's Caddy (in this process, or the child's
// in the pinned layout) with one loopback site on port (admin off,
// errors-only logs) whose Caddyfile body is site, and returns the site's
// base URL.
func loadSite(port int, site string) string {
	src := fmt.Sprintf("{\n\tadmin off\n\tpersist_config off\n\tlog {\n\t\tlevel ERROR\n\t}\n}\nhttp://127.0.0.1:%d {\n%s\n}\n", port, site)
	if pinned != nil {
		pinned.do("load", src)
	} else {
		check(loadCaddyfile(src))
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

// chooseLayout starts the layout asked for ("" picks pinned where it
// runs, else shared) and returns the DSN of the Postgres to measure.
func chooseLayout(layout, dsn string) string {
	switch layout {
	case "shared":
		return dsn
	case "", "pinned":
	default:
		check(fmt.Errorf("-layout %q: pinned or shared", layout))
	}
	// Connections: the gateway's pools, the driver's and setup's.
	l, err := startPinned("-c", "max_connections=400")
	if err != nil {
		if layout == "pinned" {
			check(fmt.Errorf("-layout pinned: %w", err))
		}
		fmt.Printf("layout shared: the pinned layout does not run here (%v)\n", err)
		return dsn
	}
	pinned = l
	onExit(l.close)
	return l.postgres.URL
}

// runRaw is the baseline: the same query straight through pgx.
func runRaw(ctx context.Context, dsn string, clients int, d time.Duration, rows int) *stats {
	pool := openPool(ctx, dsn, clients)
	defer pool.Close()
	return drive(clients, d, func(r *rand.Rand) error {
		return lookupUser(ctx, pool, r.Int64N(int64(rows))+1)
	})
}

// openPool opens a pgx pool of conns connections.
func openPool(ctx context.Context, dsn string, conns int) *pgxpool.Pool {
	cfg, err := pgxpool.ParseConfig(dsn)
	check(err)
	cfg.MaxConns = int32(conns)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	check(err)
	return pool
}

// lookupUser is the tool's query run directly, its row scanned.
func lookupUser(ctx context.Context, pool *pgxpool.Pool, user int64) error {
	var (
		id          int64
		name, email string
		created     time.Time
	)
	return pool.QueryRow(ctx, query, user).Scan(&id, &name, &email, &created)
}

// runGateway drives one MCP session per client. Each session is opened with
// a real initialize handshake (session id, negotiated protocol version);
// calls are plain JSON-RPC POSTs, so the load generator spends as little of
// the shared CPU as a client can.
func runGateway(ctx context.Context, url string, clients int, d time.Duration, rows int, version string) *stats {
	sessions := make([]*session, clients)
	for i := range sessions {
		s, err := openSession(ctx, url, version)
		check(err)
		sessions[i] = s
	}
	var next sync.Mutex
	n := 0
	return drive(clients, d, func(r *rand.Rand) error {
		next.Lock()
		s := sessions[n%clients]
		n++
		next.Unlock()
		return s.callGetUser(ctx, r.Int64N(int64(rows))+1)
	})
}

// drive runs fn from `workers` goroutines for d after a short warm-up and
// records every latency.
func drive(workers int, d time.Duration, fn func(*rand.Rand) error) *stats {
	warm := time.Now().Add(time.Second)
	stop := warm.Add(d)
	all := make([][]time.Duration, workers)
	errs := make([]int, workers)
	firstErrs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 42))
			for {
				start := time.Now()
				if start.After(stop) {
					return
				}
				err := fn(r)
				if start.Before(warm) {
					continue
				}
				if err != nil {
					if errs[w] == 0 {
						firstErrs[w] = err
					}
					errs[w]++
					continue
				}
				all[w] = append(all[w], time.Since(start))
			}
		}()
	}
	wg.Wait()
	s := &stats{elapsed: d}
	for w := range workers {
		s.lat = append(s.lat, all[w]...)
		s.errors += errs[w]
		if s.firstErr == nil {
			s.firstErr = firstErrs[w]
		}
	}
	slices.Sort(s.lat)
	return s
}

type stats struct {
	lat      []time.Duration
	errors   int
	firstErr error // one of the errors, to say what they were
	elapsed  time.Duration
}

func (s *stats) rps() float64 { return float64(len(s.lat)) / s.elapsed.Seconds() }

func (s *stats) pct(p float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	return s.lat[min(len(s.lat)-1, int(float64(len(s.lat))*p))]
}

func (s *stats) max() time.Duration { return s.pct(1) }

func (s *stats) print(name string) {
	fmt.Printf("%-20s %8.0f req/s  p50 %-9s p99 %-9s max %-9s errors %d\n", name, s.rps(),
		s.pct(0.50).Round(time.Microsecond), s.pct(0.99).Round(time.Microsecond), s.max().Round(time.Microsecond), s.errors)
	if s.firstErr != nil {
		fmt.Printf("%-20s first error: %.300v\n", "", s.firstErr)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// check ends the program (and its servers, onExit) on an error.
func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		exit(1)
	}
}
