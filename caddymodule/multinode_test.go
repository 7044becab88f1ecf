package caddymodule

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

var caddyBin struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// caddyBinary builds Caddy with edgemcp (internal/caddybin) once per test
// binary: gateway nodes run as real processes.
func caddyBinary(t *testing.T) string {
	t.Helper()
	caddyBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "edgemcp-caddybin-")
		if err != nil {
			caddyBin.err = err
			return
		}
		caddyBin.path = filepath.Join(dir, "caddy")
		caddyBin.out, caddyBin.err = exec.Command("go", "build", "-o", caddyBin.path, "../internal/caddybin").CombinedOutput()
	})
	if caddyBin.err != nil {
		t.Fatalf("go build ./internal/caddybin: %v\n%s", caddyBin.err, caddyBin.out)
	}
	return caddyBin.path
}

// node is a gateway node: the caddy binary as its own process.
type node struct {
	name string
	port int
	cmd  *exec.Cmd
	url  string
}

func startNode(t *testing.T, name, caddyfile string) *node {
	t.Helper()
	n := &node{name: name, port: freePort(t)}
	n.url = fmt.Sprintf("http://127.0.0.1:%d/mcp", n.port)
	dir := t.TempDir()
	cfg := fmt.Sprintf("{\n\tadmin off\n\tpersist_config off\n\tstorage file_system %s\n\tlog default {\n\t\toutput discard\n\t}\n}\nhttp://127.0.0.1:%d {\n\tbind 127.0.0.1\n\trespond /healthz 200\n%s\n}\n",
		dir, n.port, strings.ReplaceAll(caddyfile, "NODE", name))
	file := filepath.Join(dir, "Caddyfile")
	writeFile(t, file, cfg)
	n.cmd = exec.Command(caddyBinary(t), "run", "--config", file, "--adapter", "caddyfile")
	n.cmd.Env = append(os.Environ(), "EDGEMCP_SESSION_KEY="+strings.Repeat("n", 40))
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.kill)
	waitFor(t, "node "+name+" to listen", func() bool {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", n.port), time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return n
}

// kill ends the node at once, as a crash or a lost machine would.
func (n *node) kill() {
	if n.cmd.Process != nil {
		_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
		_ = n.cmd.Wait()
	}
}

// TestSeveralNodes: two gateway nodes (real processes sharing the session
// key, the Redis cache level) behind Caddy's reverse_proxy with
// `lb_policy header Mcp-Session-Id` and active health checks. A session
// keeps working, with no wrong answer, when the node serving it is killed
// under load; an entry cached through one node is a hit on the other; with
// the Redis stopped both nodes keep serving.
func TestSeveralNodes(t *testing.T) {
	redisURL, stopRedis := privateRedis(t)
	prefix := testservices.Name("nodes") + ":"
	nodeCfg := fmt.Sprintf(`	mcp /mcp {
		session_key {env.EDGEMCP_SESSION_KEY}
		connector db postgres %q
		cache {
			redis %s
			key_prefix %s
		}
		tool stamp {
			description "A fresh value per execution, cached"
			use db
			statement "SELECT md5(random()::text) AS u, {{ inputs.n }}::int AS n"
			input n int required
			cache 1h
		}
		tool node {
			description "Which node answers"
			use db
			statement "SELECT 'NODE' AS node"
		}
	}`, postgresURL(t), redisURL, prefix)
	a, b := startNode(t, "A", nodeCfg), startNode(t, "B", nodeCfg)
	g := startGateway(t, fmt.Sprintf(`SITE {
	reverse_proxy 127.0.0.1:%d 127.0.0.1:%d {
		lb_policy header Mcp-Session-Id
		lb_try_duration 5s
		lb_try_interval 50ms
		fail_duration 30s
		health_uri /healthz
		health_interval 100ms
		health_timeout 1s
	}
}`, a.port, b.port))

	nodeOf := func(s *rawSession) string {
		r := s.call(t, "node", map[string]any{}).tool(t)
		return r.rows(t)[0]["node"].(string)
	}
	stamp := func(s *rawSession, n int) string {
		return s.call(t, "stamp", map[string]any{"n": n}).tool(t).rows(t)[0]["u"].(string)
	}

	// A value cached through one node is a hit on the other (the Redis level).
	direct := map[string]*rawSession{"A": (&gateway{t: t, URL: a.url}).rawSession(t, "2025-06-18"), "B": (&gateway{t: t, URL: b.url}).rawSession(t, "2025-06-18")}
	if ua, ub := stamp(direct["A"], 42), stamp(direct["B"], 42); ua != ub {
		t.Errorf("an entry cached through node A is not a hit on node B: %s vs %s", ua, ub)
	}

	// A session through the front, and the node that serves it.
	s := g.rawSession(t, "2025-06-18")
	first := nodeOf(s)
	want := stamp(s, 1)
	var wrong, failed, ok atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := 1000; ; id++ {
				select {
				case <-stop:
					return
				default:
				}
				r := s.callAsync(id, "stamp", map[string]any{"n": 1})
				switch {
				case r.err != nil || r.code != 0:
					failed.Add(1)
				default:
					ok.Add(1)
				}
			}
		}()
	}
	waitCalls(t, &ok, 20)
	map[string]*node{"A": a, "B": b}[first].kill()
	before := ok.Load()
	waitCalls(t, &ok, before+50)
	close(stop)
	wg.Wait()
	if then := nodeOf(s); then == first {
		t.Fatalf("node %s was killed but still answers", first)
	}
	if got := stamp(s, 1); got != want {
		wrong.Add(1)
		t.Errorf("after the failover the session got %s, want the cached %s", got, want)
	}
	t.Logf("calls during the failover: %d ok, %d failed (in flight to the killed node), %d wrong", ok.Load(), failed.Load(), wrong.Load())

	// Redis stopped: the surviving node keeps serving.
	stopRedis()
	survivor := map[string]*rawSession{"A": direct["B"], "B": direct["A"]}[first]
	for n := 100; n < 103; n++ {
		if u := stamp(survivor, n); u == "" {
			t.Errorf("n=%d with Redis down: empty", n)
		}
	}
	if got := nodeOf(s); got == first {
		t.Errorf("the session went back to the killed node %s", got)
	}
}
