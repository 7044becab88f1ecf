package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/jackc/pgx/v5"
)

// The soak scenario (go run ./bench -scenario soak -duration 5m): clients
// call a mix of tools (a DB tool, a cached DB tool, a script handler, an
// OpenAPI tool) for the whole duration, each starting a new session every
// sessionCalls calls (and ending the old one with DELETE), while a sampler
// records goroutines, heap in use (after a GC), open files and the
// gateway's database backends. After a warm-up, nothing may grow beyond
// the bounds below: a leak of any of them fails the run (non-zero exit).

const sessionCalls = 200

// Stated bounds, final against baseline (the first sample after the
// warm-up); final is the smallest of the last three samples, so that one
// transient spike is not taken for growth.
var soakBounds = []struct {
	name  string
	limit func(base float64) float64
	text  string
}{
	{"goroutines", func(b float64) float64 { return b*1.1 + 25 }, "+10% +25"},
	{"heap MiB", func(b float64) float64 { return b*1.5 + 16 }, "×1.5 +16 MiB"},
	{"open files", func(b float64) float64 { return b + 32 }, "+32"},
	{"db backends", func(b float64) float64 { return b + 2 }, "+2"},
}

type soakSample struct {
	at   time.Duration
	vals [4]float64 // in soakBounds' order
}

// runSoak runs the soak for d with clients and writes its report to out;
// the error says what grew or failed.
func runSoak(ctx context.Context, dsn string, clients int, d time.Duration, version string, out io.Writer) error {
	app := "edgemcp_soak_" + strconv.Itoa(os.Getpid())
	dsn = withParam(dsn, "application_name", app)
	dir, err := os.MkdirTemp("", "edgemcp-soak")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for name, src := range benchScripts {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			return err
		}
	}
	upstream, spec, cleanup := itemsAPI()
	defer cleanup()
	base := loadSite(freePort(), fmt.Sprintf(`	mcp /mcp {
		scripts_dir %s
		max_sessions %d
		connector main postgres %s {
			max_conns %d
		}
		cache {
			max_size 8MiB
		}
		source api openapi %s {
			base_url http://%s/v1
			retries 0
		}
%s		tool get-user-cached {
			description "Fetch a user by id, cached"
			use main
			statement "SELECT id, name, email, created_at FROM edgemcp_bench.users WHERE id = {{ inputs.id }}"
			input id int required
			cache 2s
		}
		tool hello {
			description "Say hello"
			input name string default "world"
		}
	}`, dir, clients*4, dsn, clients, spec, upstream, getUserTool(""))) + "/mcp"
	defer caddy.Stop()

	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer admin.Close(context.Background())
	backends := func() float64 {
		var n int
		_ = admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()", app).Scan(&n)
		return float64(n)
	}

	calls := []func(s *session, r *rand.Rand) error{
		func(s *session, r *rand.Rand) error { return s.callGetUser(ctx, 1+r.Int64N(10000)) },
		func(s *session, r *rand.Rand) error {
			return s.callTool(ctx, "get-user-cached", `{"id":`+strconv.Itoa(1+r.IntN(100))+`}`)
		},
		func(s *session, r *rand.Rand) error { return s.callTool(ctx, "hello", `{"name":"soak"}`) },
		func(s *session, r *rand.Rand) error {
			return s.callTool(ctx, "api_getItem", `{"id":`+strconv.Itoa(1+r.IntN(1000))+`}`)
		},
	}
	fmt.Fprintf(out, "edgemcp soak: %d clients, %s, DB + cached + script + OpenAPI tools, a new session every %d calls, GOMAXPROCS=%d\n",
		clients, d, sessionCalls, runtime.GOMAXPROCS(0))

	stop := make(chan struct{})
	var done, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
			var s *session
			for n := 0; ; n++ {
				select {
				case <-stop:
					endSession(ctx, s)
					return
				default:
				}
				if n%sessionCalls == 0 {
					endSession(ctx, s)
					var err error
					if s, err = openSession(ctx, base, version); err != nil {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, err)
						s = nil
						time.Sleep(10 * time.Millisecond)
						continue
					}
				}
				if err := calls[r.IntN(len(calls))](s, r); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
				done.Add(1)
			}
		})
	}

	sample := func(at time.Duration) soakSample {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return soakSample{at: at, vals: [4]float64{float64(runtime.NumGoroutine()), mib(m.HeapInuse), float64(openFiles()), backends()}}
	}
	interval := max(d/20, time.Second)
	warm := max(d/10, 3*time.Second)
	start := time.Now()
	var samples []soakSample
	for t := time.NewTicker(interval); time.Since(start) < d; {
		<-t.C
		samples = append(samples, sample(time.Since(start)))
	}
	close(stop)
	wg.Wait()
	elapsed := time.Since(start)

	fmt.Fprintf(out, "%8s %11s %9s %11s %12s\n", "t", "goroutines", "heap MiB", "open files", "db backends")
	for _, s := range samples {
		fmt.Fprintf(out, "%8s %11.0f %9.1f %11.0f %12.0f\n", s.at.Round(time.Second), s.vals[0], s.vals[1], s.vals[2], s.vals[3])
	}
	fmt.Fprintf(out, "%d calls (%.0f/s), %d failed\n", done.Load(), float64(done.Load())/elapsed.Seconds(), failed.Load())

	var problems []string
	if failed.Load() > 0 {
		problems = append(problems, fmt.Sprintf("%d calls failed, the first: %v", failed.Load(), firstErr.Load()))
	}
	i := slices.IndexFunc(samples, func(s soakSample) bool { return s.at >= warm })
	if i < 0 || len(samples)-i < 4 {
		return fmt.Errorf("too few samples after the warm-up (%d): run longer", len(samples))
	}
	baseline, last := samples[i], samples[len(samples)-3:]
	for k, b := range soakBounds {
		final := min(last[0].vals[k], last[1].vals[k], last[2].vals[k])
		limit := b.limit(baseline.vals[k])
		verdict := "ok"
		if final > limit {
			verdict = "GREW"
			problems = append(problems, fmt.Sprintf("%s grew from %.1f to %.1f (bound %s = %.1f)", b.name, baseline.vals[k], final, b.text, limit))
		}
		fmt.Fprintf(out, "%-12s baseline %8.1f final %8.1f bound %-14s %8.1f  %s\n", b.name, baseline.vals[k], final, b.text, limit, verdict)
	}
	if len(problems) > 0 {
		return fmt.Errorf("soak: %s", strings.Join(problems, "; "))
	}
	return nil
}

// endSession ends s with DELETE, as a client that is done does.
func endSession(ctx context.Context, s *session) {
	if s == nil || s.id == "" {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.url, nil)
	if err != nil {
		return
	}
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("Mcp-Protocol-Version", s.version)
	if res, err := s.client.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
}

// openFiles counts this process's file descriptors (sockets included).
func openFiles() int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(fds)
}

// withParam adds key=value to a URL-form or keyword-form DSN.
func withParam(dsn, key, value string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + key + "=" + value
	}
	return dsn + " " + key + "=" + value
}
