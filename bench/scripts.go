package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/script"
)

// The script scenarios (go run ./bench -scripts): in one run, the DB tool
// without scripts, the same tool with an input and an output mapper, and a
// handler tool, each driven through the real gateway; then the two
// mappers alone, in process, on the payloads the gateway gives them, which
// is the mapper overhead without the network and database noise.

var benchScripts = map[string]string{
	"get-user-mapped/input.js":  `export default ({inputs}) => ({id: inputs.user_id})`,
	"get-user-mapped/output.js": `export default ({results}) => results.map(r => ({...r, display: r.name + ' <' + r.email + '>'}))`,
	"hello/handler.js":          `export default ({inputs}) => ({greeting: 'Hello, ' + inputs.name + '!'})`,
}

func runScriptBench(ctx context.Context, dsn string, clients int, d time.Duration, rows int, version string) {
	dir := writeScripts(benchScripts)
	defer os.RemoveAll(dir)
	url := startScriptGateway(dsn, dir, clients)
	defer caddy.Stop()
	fmt.Printf("edgemcp script bench: %d clients, %s per scenario, %d rows, GOMAXPROCS=%d\n", clients, d, rows, runtime.GOMAXPROCS(0))

	scenario := func(name, tool string, args func(*rand.Rand) string) *stats {
		sessions := make([]*session, clients)
		for i := range sessions {
			s, err := openSession(ctx, url, version)
			check(err)
			sessions[i] = s
		}
		var next atomic.Int64
		st := drive(clients, d, func(r *rand.Rand) error {
			s := sessions[next.Add(1)%int64(clients)]
			return s.callTool(ctx, tool, args(r))
		})
		st.print(name)
		return st
	}
	byID := func(key string) func(*rand.Rand) string {
		return func(r *rand.Rand) string {
			return `{"` + key + `":` + strconv.FormatInt(r.Int64N(int64(rows))+1, 10) + `}`
		}
	}
	plain := scenario("db tool", "get-user", byID("id"))
	mapped := scenario("db tool + 2 mappers", "get-user-mapped", byID("user_id"))
	scenario("handler tool", "hello", func(*rand.Rand) string { return `{"name":"Ada"}` })
	fmt.Printf("mapper overhead through the gateway: p50 %+v (noisy: includes Postgres and HTTP variance)\n",
		(mapped.pct(0.5) - plain.pct(0.5)).Round(time.Microsecond))

	inProcessMappers(ctx, dir, d)
}

// writeScripts writes files (path under the directory: source) to a new
// temporary scripts_dir and returns it.
func writeScripts(files map[string]string) string {
	dir, err := os.MkdirTemp("", "edgemcp-bench-scripts")
	check(err)
	for name, src := range files {
		check(os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755))
		check(os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
	}
	return dir
}

// inProcessMappers times input + output mapper per call on one goroutine,
// with the payloads the engine builds.
func inProcessMappers(ctx context.Context, dir string, d time.Duration) {
	loader := script.NewLoader()
	in, err := loader.Load(filepath.Join(dir, "get-user-mapped/input.js"), script.Options{Name: "bench"})
	check(err)
	out, err := loader.Load(filepath.Join(dir, "get-user-mapped/output.js"), script.Options{Name: "bench"})
	check(err)
	tool := &pipeline.Tool{Name: "get-user-mapped", Description: "Fetch a user by id"}
	row := &pipeline.Rows{Columns: []string{"id", "name", "email", "created_at"},
		Values: [][]any{{int64(42), "user 42", "user42@example.com", "2024-01-01T00:42:00Z"}}}
	var lat []time.Duration
	stop := time.Now().Add(d)
	for time.Now().Before(stop) {
		start := time.Now()
		call := &pipeline.Call{Tool: tool, Inputs: map[string]any{"user_id": int64(42)}}
		if _, err := (script.InputMapper{Script: in}).Transform(ctx, pipeline.Payload(call, "inputs", call.Inputs)); err != nil {
			check(err)
		}
		if _, err := (script.OutputMapper{Script: out}).Transform(ctx, pipeline.Payload(call, "results", row)); err != nil {
			check(err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	st := &stats{lat: lat, elapsed: d}
	fmt.Printf("both mappers in process: %d calls, p50 %s p99 %s (target p50 < 50µs)\n",
		len(lat), st.pct(0.5).Round(100*time.Nanosecond), st.pct(0.99).Round(100*time.Nanosecond))
}

func startScriptGateway(dsn, dir string, clients int) string {
	return loadSite(freePort(), fmt.Sprintf(`	mcp /mcp {
		scripts_dir %s
		connector main postgres %s {
			max_conns %d
		}
%s		tool get-user-mapped {
			description "Fetch a user by id, through an input and an output mapper"
			use main
			statement "SELECT id, name, email, created_at FROM edgemcp_bench.users WHERE id = {{ inputs.id }}"
			input id int required
		}
		tool hello {
			description "Say hello"
			input name string default "world"
		}
	}`, dir, dsn, clients, getUserTool(""))) + "/mcp"
}

// callTool is one tools/call of any tool with JSON arguments.
func (s *session) callTool(ctx context.Context, tool, args string) error {
	n := s.seq.Add(1)
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(n, 10) +
		`,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	res, _, err := s.post(ctx, body)
	if err != nil {
		return err
	}
	if !bytes.Contains(res, []byte(`"content"`)) || bytes.Contains(res, []byte(`"isError":true`)) {
		return fmt.Errorf("tools/call %s: %.200s", tool, res)
	}
	return nil
}
