package caddymodule

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// Helpers of the cache tests: a schema of their own with a counting
// function, a TCP proxy that can be cut, a private redis-server.

// cacheSchema creates cache_e2e: items(id, name), and counted(x), which
// counts its calls in cache_e2e.calls and sleeps a little so that
// concurrent callers overlap.
func cacheSchema(t *testing.T) {
	t.Helper()
	db := testDB(t)
	execSQL(t, db, `DROP SCHEMA IF EXISTS cache_e2e CASCADE`)
	execSQL(t, db, `CREATE SCHEMA cache_e2e`)
	execSQL(t, db, `CREATE TABLE cache_e2e.items (id int PRIMARY KEY, name text NOT NULL)`)
	execSQL(t, db, `INSERT INTO cache_e2e.items VALUES (1, 'A'), (2, 'A2')`)
	execSQL(t, db, `CREATE TABLE cache_e2e.calls (n int NOT NULL)`)
	execSQL(t, db, `INSERT INTO cache_e2e.calls VALUES (0)`)
	execSQL(t, db, `CREATE FUNCTION cache_e2e.counted(x int) RETURNS int LANGUAGE plpgsql VOLATILE AS $$
		BEGIN
			UPDATE cache_e2e.calls SET n = n + 1;
			PERFORM pg_sleep(0.3);
			RETURN x;
		END $$`)
	t.Cleanup(func() { execSQL(t, testDB(t), `DROP SCHEMA IF EXISTS cache_e2e CASCADE`) })
}

// countedCalls is how many times cache_e2e.counted ran.
func countedCalls(t *testing.T) int {
	t.Helper()
	var n int
	if err := testDB(t).QueryRow(context.Background(), `SELECT n FROM cache_e2e.calls`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// callRaw posts one tools/call on an open session; safe for concurrent use
// (no testing.T inside, so goroutines may call it).
func callRaw(s *rawSession, id int, tool string, args string) (rpcResponse, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
	req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.session)
	req.Header.Set("Mcp-Protocol-Version", s.version)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return rpcResponse{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return rpcResponse{}, err
	}
	var out rpcResponse
	if err := json.Unmarshal(bytes.TrimSpace(raw), &out); err != nil {
		return out, fmt.Errorf("response %q: %v", raw, err)
	}
	out.Status = res.StatusCode
	return out, nil
}

// cacheMeta is the result's _meta["edgemcp/cache"], nil when absent.
func cacheMeta(t *testing.T, r rpcResponse) map[string]any {
	t.Helper()
	var res struct {
		Meta map[string]map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("result %s: %v", r.Result, err)
	}
	return res.Meta["edgemcp/cache"]
}

// cutProxy forwards a loopback port to target until cut, which closes the
// listener and every open connection: the database "goes away" without
// touching the shared server.
type cutProxy struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{l: l}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.DialTimeout("tcp", target, 5*time.Second)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	t.Cleanup(p.cut)
	return p
}

func (p *cutProxy) port() int { return p.l.Addr().(*net.TCPAddr).Port }

func (p *cutProxy) cut() {
	p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// proxiedPostgres starts a cuttable proxy in front of the test Postgres
// and returns the DSN that goes through it.
func proxiedPostgres(t *testing.T) (string, *cutProxy) {
	t.Helper()
	u, err := url.Parse(postgresURL(t))
	if err != nil || u.Host == "" {
		t.Fatalf("EDGEMCP_TEST_POSTGRES_URL must be a postgres:// URL for this test: %v", err)
	}
	target := u.Host
	if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), "5432")
	}
	p := startProxy(t, target)
	u.Host = fmt.Sprintf("127.0.0.1:%d", p.port())
	return u.String(), p
}

// redisClient connects to url or fails the test: a missing Redis is a
// failure, never a skip.
func redisClient(t *testing.T, url string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("Redis at %s does not answer (EDGEMCP_TEST_REDIS_URL; scripts/test.sh starts one): %v", url, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// keysWithPrefix lists (and with del, deletes) the keys under prefix.
func keysWithPrefix(t *testing.T, c *redis.Client, prefix string, del bool) []string {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if del && len(keys) > 0 {
		_ = c.Del(ctx, keys...).Err()
	}
	return keys
}

// privateRedis starts a throwaway redis-server on a spare loopback port
// and returns its URL and a function that stops it
// (testservices.StartRedis; its Start brings it back).
func privateRedis(t *testing.T) (string, func()) {
	t.Helper()
	srv := testservices.StartRedis(t)
	redisClient(t, srv.URL)
	return srv.URL, srv.Stop
}

// reloadSession reloads the gateway with cf and opens a new session on it.
// Caddy closes the old server's keep-alive connections during the hand-over
// and Go does not retry a POST, so idle connections are dropped first and
// the session's opening is retried briefly (as reload_test.go does).
func reloadSession(t *testing.T, g *gateway, cf string) *rawSession {
	t.Helper()
	if err := g.load(cf); err != nil {
		t.Fatalf("reload: %v", err)
	}
	for attempt := 0; ; attempt++ {
		http.DefaultClient.CloseIdleConnections()
		body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
		req, _ := http.NewRequest(http.MethodPost, g.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
			err = fmt.Errorf("HTTP %d", res.StatusCode)
		}
		if attempt == 5 {
			t.Fatalf("gateway not answering after the reload: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return g.rawSession(t, "2025-11-25")
}
