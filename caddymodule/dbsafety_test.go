package caddymodule

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Database safety and resilience against real servers: the shared test
// Postgres (only our own backends are touched: they carry a unique
// application_name) and, for a database that is down at startup, a private
// throwaway Postgres started by the test on a spare port.

// appName is a unique application_name for this test's connector, so that
// pg_terminate_backend hits no other helper's sessions.
func appName(t testing.TB) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "edgemcp_dbsafety_" + hex.EncodeToString(b)
}

// withParams adds query parameters to a postgres:// URL.
func withParams(t testing.TB, dsn string, kv ...string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// callResult is one tools/call outcome, safe to produce off the test
// goroutine.
type callResult struct {
	code    int // 0: success
	message string
	took    time.Duration
	err     error // transport failure
}

// callAsync is rawSession.call for other goroutines: no t.Fatal.
func (s *rawSession) callAsync(id int, tool string, args any) callResult {
	a, _ := json.Marshal(args)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, a)
	req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.session)
	req.Header.Set("Mcp-Protocol-Version", s.version)
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return callResult{err: err}
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := callResult{took: time.Since(start)}
	raw = bytes.TrimSpace(raw)
	for _, line := range strings.Split(string(raw), "\n") { // SSE: the data line
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			raw = []byte(d)
		}
	}
	var r rpcResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return callResult{err: fmt.Errorf("response %q: %v", raw, err)}
	}
	if r.Error != nil {
		out.code, out.message = r.Error.Code, r.Error.Message
	}
	return out
}

// terminateBackends ends every session of application_name app and waits
// until each has exited; it returns how many it ended.
func terminateBackends(t testing.TB, app string) int {
	t.Helper()
	var n int
	err := testDB(t).QueryRow(context.Background(),
		`SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDBSafetyConnectorBusy exhausts a pool of two connections with slow
// statements: a third call waits queue_timeout and fails with "connector
// busy"; a fourth, beyond max_waiting 1, fails at once.
func TestDBSafetyConnectorBusy(t *testing.T) {
	testDB(t)
	dsn := withParams(t, postgresURL(t), "application_name", appName(t))
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		connector db postgres %q {
			max_conns 2
			max_waiting 1
			queue_timeout 2s
		}
		tool sleep {
			description "Sleeps"
			use db
			statement "SELECT pg_sleep({{ inputs.s }}) IS NULL AS slept"
			input s float required
		}
	}
}`, dsn))
	s := g.rawSession(t, "2025-06-18")

	var wg sync.WaitGroup
	slow := make([]callResult, 2)
	for i := range slow {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slow[i] = s.callAsync(100+i, "sleep", map[string]any{"s": 5})
		}()
	}
	// Both connections busy: wait until the server runs both statements.
	waitSleeping(t, dsnApp(t, dsn), 2)

	// Two more calls at once: one of them waits (max_waiting 1) and fails
	// at queue_timeout, the other is beyond max_waiting and fails without
	// waiting. Which is which is up to the scheduler, so they are told apart
	// by time: only the waiter can take queue_timeout, and neither can get a
	// slot (the slow calls hold both for 5s), so both must say busy.
	more := make(chan callResult, 2)
	for id := range 2 {
		go func() { more <- s.callAsync(200+id, "sleep", map[string]any{"s": 0}) }()
	}
	beyond, queued := <-more, <-more
	if beyond.took > queued.took {
		beyond, queued = queued, beyond
	}
	for _, r := range []callResult{beyond, queued} {
		if r.err != nil || r.code != -32000 || !strings.Contains(r.message, "connector busy") {
			t.Errorf("call while the pool is busy: %+v, want -32000 connector busy", r)
		}
	}
	if queued.took < 1900*time.Millisecond {
		t.Errorf("the queued call failed after %s, before queue_timeout (2s)", queued.took)
	}
	if beyond.took >= 1900*time.Millisecond {
		t.Errorf("both calls waited (%s and %s): the one beyond max_waiting must fail at once", beyond.took, queued.took)
	}
	wg.Wait()
	for i, r := range slow {
		if r.err != nil || r.code != 0 {
			t.Errorf("slow call %d: %+v", i, r)
		}
	}
	// The pool is free again.
	if r := s.callAsync(300, "sleep", map[string]any{"s": 0}); r.err != nil || r.code != 0 {
		t.Errorf("after the slow calls: %+v", r)
	}
}

// waitSleeping waits until n statements of application_name app run
// pg_sleep on the test server.
func waitSleeping(t testing.TB, app string, n int) {
	t.Helper()
	waitSleepingOn(t, testDB(t), app, n)
}

// waitSleepingOn is waitSleeping on the server of db.
func waitSleepingOn(t testing.TB, db *pgxpool.Pool, app string, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		var running int
		_ = db.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' AND query LIKE '%pg_sleep%'`, app).Scan(&running)
		if running == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d slow statements running, want %d", running, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitCalls waits until ok reaches n (successful calls of a stream).
func waitCalls(t testing.TB, ok *atomic.Int64, n int64) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d successful calls (%d so far)", n, ok.Load()), func() bool { return ok.Load() >= n })
}

func dsnApp(t testing.TB, dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("application_name")
}

// TestDBSafetySurvivesBackendKill terminates every pooled backend of the
// gateway during a stream of calls, twice: the calls that were running may
// fail with -32000, every later call succeeds on new connections, with no
// reload. A running slow statement whose backend is killed fails with
// -32000 and is not retried behind the DBA's back.
func TestDBSafetySurvivesBackendKill(t *testing.T) {
	testDB(t)
	for _, ro := range []bool{true, false} {
		t.Run(fmt.Sprintf("read_only=%t", ro), func(t *testing.T) {
			app := appName(t)
			dsn := withParams(t, postgresURL(t), "application_name", app)
			readOnly := ""
			if ro {
				readOnly = "read_only\n\t\t\tblock_functions none" // the sleep tool
			}
			g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		connector db postgres %q {
			max_conns 4
			%s
		}
		tool echo {
			description "Echo a number"
			use db
			statement "SELECT {{ inputs.n }}::int8 AS n, pg_backend_pid() AS pid"
			input n int required
		}
		tool sleep {
			description "Sleeps"
			use db
			statement "SELECT pg_sleep({{ inputs.s }}) IS NULL AS slept"
			input s float required
		}
	}
}`, dsn, readOnly))
			s := g.rawSession(t, "2025-06-18")

			var (
				stop   atomic.Bool
				killed atomic.Bool
				id     atomic.Int64
				mu     sync.Mutex
				bad    []callResult
				ok     atomic.Int64
				wg     sync.WaitGroup
			)
			for w := 0; w < 4; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for !stop.Load() {
						afterKill := killed.Load()
						r := s.callAsync(int(id.Add(1)), "echo", map[string]any{"n": 7})
						switch {
						case r.err == nil && r.code == 0:
							ok.Add(1)
						case r.err == nil && r.code == -32000 && !afterKill:
							// In flight when its backend died: allowed.
						default:
							mu.Lock()
							bad = append(bad, r)
							mu.Unlock()
						}
					}
				}()
			}
			// Let the stream run, kill its backends, and let it run on for as
			// many calls again: counted in calls, not in time, so that a slow
			// machine still sees calls before and after the kill.
			waitCalls(t, &ok, 20)
			n1 := terminateBackends(t, app)
			killed.Store(true)
			waitCalls(t, &ok, ok.Load()+20)
			stop.Store(true)
			wg.Wait()
			if n1 == 0 {
				t.Fatal("no backend of the gateway to terminate during the stream")
			}
			if len(bad) > 0 {
				t.Errorf("%d calls failed after the kill completed, e.g. %+v", len(bad), bad[0])
			}
			if ok.Load() == 0 {
				t.Fatal("no call succeeded")
			}

			// Idle connections killed: the very next calls all succeed.
			if n := terminateBackends(t, app); n == 0 {
				t.Fatal("no idle backend to terminate")
			}
			for i := 0; i < 8; i++ {
				if r := s.callAsync(1000+i, "echo", map[string]any{"n": i}); r.err != nil || r.code != 0 {
					t.Fatalf("call %d after killing idle backends: %+v", i, r)
				}
			}

			// A running statement whose backend is killed fails, once: a
			// retry would run it again on a live backend and succeed.
			slow := make(chan callResult, 1)
			go func() { slow <- s.callAsync(2000, "sleep", map[string]any{"s": 3}) }()
			waitSleeping(t, app, 1)
			terminateBackends(t, app)
			r := <-slow
			if r.err != nil || r.code != -32000 || !strings.Contains(r.message, "database unavailable") {
				t.Errorf("running statement whose backend was killed: %+v, want -32000 database unavailable", r)
			}
			if r := s.callAsync(3000, "echo", map[string]any{"n": 1}); r.err != nil || r.code != 0 {
				t.Errorf("call after the kill: %+v", r)
			}
		})
	}
}

// privatePostgres is a throwaway PostgreSQL server started by a test.
type privatePostgres struct {
	bin, dir, data, user string
}

// startPrivatePostgres initializes and starts a server on port (as the
// postgres user when the test runs as root: initdb refuses root). It is
// stopped when the test ends. Missing binaries fail the test.
func startPrivatePostgres(t *testing.T, port int) *privatePostgres {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Strings(bins)
	var bin string
	if len(bins) > 0 {
		bin = filepath.Dir(bins[len(bins)-1])
	} else if p, err := exec.LookPath("initdb"); err == nil {
		bin = filepath.Dir(p)
	} else {
		t.Fatal("initdb not found (apt-get install postgresql): this test starts a private server")
	}
	dir, err := os.MkdirTemp("", "edgemcp-dbsafety-pg-")
	if err != nil {
		t.Fatal(err)
	}
	p := &privatePostgres{bin: bin, dir: dir, data: filepath.Join(dir, "data")}
	if os.Geteuid() == 0 {
		p.user = "postgres"
		u, err := user.Lookup(p.user)
		if err != nil {
			t.Fatalf("running as root needs a postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = p.run(dir, "pg_ctl", "-D", p.data, "-m", "immediate", "-w", "stop")
		_ = os.RemoveAll(dir)
	})
	if err := p.run(dir, "initdb", "-D", p.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		t.Fatalf("initdb: %v", err)
	}
	if err := p.run(dir, "pg_ctl", "-D", p.data, "-l", filepath.Join(dir, "server.log"), "-w", "-t", "60", "-o",
		fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off", port, dir), "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		t.Fatalf("pg_ctl start: %v\n%s", err, log)
	}
	return p
}

// pool connects to the server as an observer (its own application_name).
func (p *privatePostgres) pool(t *testing.T, port int) *pgxpool.Pool {
	t.Helper()
	db, err := pgxpool.New(context.Background(), fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&application_name=edgemcp_observer", port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// restart stops the server (ending every session) and starts it again
// with the same options.
func (p *privatePostgres) restart(t *testing.T) {
	t.Helper()
	// -l again: without it the server would write to (and hold open) our
	// output pipe.
	if err := p.run(p.dir, "pg_ctl", "-D", p.data, "-l", filepath.Join(p.dir, "server.log"), "-m", "fast", "-w", "-t", "60", "restart"); err != nil {
		t.Fatalf("pg_ctl restart: %v", err)
	}
}

func (p *privatePostgres) run(dir, tool string, args ...string) error {
	path := filepath.Join(p.bin, tool)
	var cmd *exec.Cmd
	if p.user != "" {
		cmd = exec.Command("runuser", append([]string{"-u", p.user, "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// TestDBSafetyUnavailableAtStartup points a connector at a closed port:
// Caddy starts anyway, the tool answers "connector unavailable" at once;
// a Postgres started later on that port is served without a reload. A
// `required` connector in the same situation fails the load.
func TestDBSafetyUnavailableAtStartup(t *testing.T) {
	port := freePort(t)
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&application_name=edgemcp_dbsafety&connect_timeout=2", port)
	cfg := fmt.Sprintf(`SITE {
	mcp /mcp {
		connector db postgres %q {
			%%s
		}
		tool one {
			description "One"
			use db
			statement "SELECT 1 AS one"
		}
		tool sleep {
			description "Sleeps"
			use db
			statement "SELECT pg_sleep(30) IS NULL AS slept"
		}
	}
}`, dsn)

	// required: the load fails, naming the connector, never the DSN.
	g := &gateway{t: t, port: freePort(t)}
	caddyMu.Lock()
	err := g.load(fmt.Sprintf(cfg, "required"))
	_ = caddy.Stop()
	caddyMu.Unlock()
	if err == nil || !strings.Contains(err.Error(), `connector "db" (postgres) is required and its database does not answer: database unavailable`) {
		t.Fatalf("required connector, database down: %v", err)
	}
	if strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), "postgres://") {
		t.Errorf("error leaks the DSN: %v", err)
	}

	g = startGateway(t, fmt.Sprintf(cfg, "max_conns 2"))
	s := g.rawSession(t, "2025-06-18")
	r := s.callAsync(1, "one", map[string]any{})
	// "connector unavailable" comes from the connector's guard, which
	// answers for a database known to be down without dialing it.
	if r.err != nil || r.code != -32000 || !strings.Contains(r.message, "connector unavailable") {
		t.Fatalf("database down at startup: %+v, want -32000 connector unavailable", r)
	}

	pg := startPrivatePostgres(t, port)
	deadline := time.Now().Add(30 * time.Second)
	for i := 2; ; i++ {
		r := s.callAsync(i, "one", map[string]any{})
		if r.err == nil && r.code == 0 {
			break
		}
		if r.err != nil || r.code != -32000 {
			t.Fatalf("while the database comes up: %+v", r)
		}
		if time.Now().After(deadline) {
			t.Fatalf("not serving 30s after the database came up: %+v", r)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The database restarts under a running statement and idle pooled
	// connections: the running call fails with -32000, the next calls
	// reconnect and succeed, with no reload.
	for i := 0; i < 3; i++ {
		go s.callAsync(500+i, "one", map[string]any{}) // fill the pool with idle connections
	}
	inFlight := make(chan callResult, 1)
	go func() { inFlight <- s.callAsync(600, "sleep", map[string]any{}) }()
	waitSleepingOn(t, pg.pool(t, port), "edgemcp_dbsafety", 1)
	pg.restart(t)
	if r := <-inFlight; r.err != nil || r.code != -32000 {
		t.Errorf("statement running during the restart: %+v, want -32000", r)
	}
	for i := 0; i < 4; i++ {
		if r := s.callAsync(700+i, "one", map[string]any{}); r.err != nil || r.code != 0 {
			t.Fatalf("call %d after the restart: %+v", i, r)
		}
	}
}

// TestDBSafetyProvisionChecksExpandedStatement: Provision checks the
// statement after env substitution, which `caddy adapt` cannot see.
func TestDBSafetyProvisionChecksExpandedStatement(t *testing.T) {
	conn, key, err := acquireConnector(ConnectorConfig{Name: "lite", Type: "sqlite", DSN: filepath.Join(t.TempDir(), "x.db"), ReadOnly: false})
	if err != nil {
		t.Fatal(err)
	}
	defer releaseConnector(key)
	env := func(name string) (string, bool) { return "1; DROP TABLE t", name == "FILTER" }
	conns := map[string]connectorRef{
		"lite": {config: ConnectorConfig{Name: "lite", Type: "sqlite", BlockFunctions: []string{"randomblob"}}, conn: conn},
	}
	tests := []struct{ stmt, want string }{
		{"SELECT {{ env.FILTER }}", `tool "t": statement: line 1, column 8: more than one statement ("DROP" follows a ";"): a tool runs exactly one statement (in the value of environment variable "FILTER")`},
		{"SELECT hex(RandomBlob(16))", `tool "t": statement: line 1, column 12: calls randomblob(), which block_functions refuses on this connector`},
	}
	for _, tt := range tests {
		_, err := buildTool(ToolConfig{Name: "t", Description: "d", Use: "lite", Statement: tt.stmt}, conns, caddy.NewReplacer(), env)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%q:\n got %v\nwant %s", tt.stmt, err, tt.want)
		}
	}
	if _, err := buildTool(ToolConfig{Name: "t", Description: "d", Use: "lite", Statement: "SELECT hex(zeroblob(4)) AS x"}, conns, caddy.NewReplacer(), env); err != nil {
		t.Error(err)
	}
}
