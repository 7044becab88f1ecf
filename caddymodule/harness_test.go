package caddymodule

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// The end-to-end tests run the real Caddy in-process: a Caddyfile is
// adapted with Caddy's own adapter and loaded with caddy.Load, exactly what
// `caddy run` and the admin API's /load do; a second Load is a reload.

// postgresURL is the test database (docs/architecture.md, Tests): this
// test binary's own database on the server the environment names, else on
// this machine's standard port.
func postgresURL(t testing.TB) string {
	t.Helper()
	return testservices.PostgresURL(t)
}

// testDB connects to the test Postgres or fails the test with the reason:
// a missing service is a failure, never a skip.
func testDB(t testing.TB) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, postgresURL(t))
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		t.Fatalf("the test database does not answer: %v\n"+
			"run the tests with scripts/test.sh, which starts a private server when none runs", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func execSQL(t testing.TB, db *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := db.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// freePort returns a loopback port nobody listens on.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

var caddyMu sync.Mutex // one in-process Caddy at a time

// gateway is a running Caddy serving one mcp endpoint.
type gateway struct {
	t    testing.TB
	port int
	URL  string // the MCP endpoint
	// globalBlock, when set, replaces the whole global options block.
	globalBlock string

	admin   string // the admin listener for the next load; "" is off
	globals string // more global options for the next load
}

// startGateway loads a Caddyfile whose site address is written as SITE
// (replaced by http://127.0.0.1:<port>) and stops Caddy when the test ends.
func startGateway(t testing.TB, caddyfile string, opts ...func(*gateway)) *gateway {
	t.Helper()
	caddyMu.Lock()
	g := &gateway{t: t, port: freePort(t)}
	for _, o := range opts {
		o(g)
	}
	g.URL = fmt.Sprintf("http://127.0.0.1:%d/mcp", g.port)
	// Before the load: a load that fails the test (awaitGeneration) must
	// still stop Caddy and let the next test have it.
	t.Cleanup(func() {
		_ = caddy.Stop()
		caddyMu.Unlock()
	})
	if err := g.load(caddyfile); err != nil {
		t.Fatal(err)
	}
	return g
}

// load adapts and (re)loads a Caddyfile into the running process.
func (g *gateway) load(caddyfile string) error {
	globals := g.globalBlock
	if globals == "" {
		globals = "{\n\tadmin " + cmp.Or(g.admin, "off") + "\n\tpersist_config off\n\tlog default {\n\t\toutput discard\n\t}\n" + g.globals + "}\n"
	}
	generation := loadGeneration.Add(1)
	src := globals +
		// No host matcher: every Host reaches the handler (a site address
		// with a host would answer other hosts with Caddy's empty 200), and
		// the listener is loopback only.
		strings.ReplaceAll(caddyfile, "SITE {", fmt.Sprintf("http://:%d {\n\tbind 127.0.0.1\n", g.port))
	probed := strings.Contains(caddyfile, "SITE {")
	if probed {
		// A body of digits alone would be read as a status code.
		src += fmt.Sprintf("\nhttp://%s:%d {\n\tbind 127.0.0.1\n\trespond \"generation %d\"\n}\n", loadProbeHost, g.port, generation)
	}
	cfg, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(src), map[string]any{"filename": "Caddyfile"})
	if err != nil {
		return fmt.Errorf("adapt: %w", err)
	}
	for _, w := range warnings {
		g.t.Logf("adapt warning: %s", w.String())
	}
	if err := caddy.Load(cfg, true); err != nil {
		return err
	}
	lastReload.Store(time.Now().UnixNano())
	if probed {
		if err := g.awaitGeneration(generation); err != nil {
			return err
		}
	}
	// A reload closes the previous config's connections, and a port freed by
	// an earlier test's gateway may be this one's: a keep-alive connection
	// kept from before would fail the next POST with EOF (Go's client does
	// not retry a POST). Clients reconnect after a reload; so do the tests.
	http.DefaultClient.CloseIdleConnections()
	return nil
}

// A reload returns once the previous config's servers have been told to
// stop, but Caddy's App.Stop says the scheduler may still let one of them
// accept a connection first, which it then serves with the old handler. A
// test that checks what a reload removed would see that as a failure
// (TestCatalogGateway did, under -race on a busy machine). So every load
// adds a site on the same listener that answers with the load's
// generation, and waits until fresh connections see only the new one.
const loadProbeHost = "load-probe.invalid"

var loadGeneration atomic.Int64

func (g *gateway) awaitGeneration(generation int64) error {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	want := "generation " + strconv.FormatInt(generation, 10)
	inARow, last := 0, ""
	for deadline := time.Now().Add(30 * time.Second); inARow < 3; {
		if time.Now().After(deadline) {
			return fmt.Errorf("the load of generation %d never took over port %d (the probe's last answer: %q)", generation, g.port, last)
		}
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/", g.port), nil)
		req.Host = loadProbeHost
		got := ""
		if res, err := client.Do(req); err != nil {
			got = err.Error()
		} else {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			got = res.Status + ": " + string(b)
			if res.StatusCode == http.StatusOK {
				got = string(b)
			}
		}
		last = got
		if got == want {
			inARow++
			continue
		}
		inARow = 0
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// mcpClient opens an initialized mcp-go client session on the gateway.
// mcp-go's latest is the stateless 2026-07-28 core: the gateway must
// negotiate it, not fall back. mcp-go's client falls back to the
// initialize handshake on any failure of its server/discover probe, and
// right after a reload the probe's fresh connection may still reach the
// replaced server as it shuts down (Caddy's App.Stop; load waits for three
// fresh connections to see the new config, which narrows that window but
// cannot close it): so a fallback is retried twice on a new client, and
// one that persists fails the test.
func (g *gateway) mcpClient(t testing.TB, opts ...transport.StreamableHTTPCOption) *client.Client {
	t.Helper()
	var c *client.Client
	for attempt := 1; ; attempt++ {
		var err error
		if c, err = client.NewStreamableHttpClient(g.URL, opts...); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := c.Start(ctx); err != nil {
			cancel()
			t.Fatal(err)
		}
		req := mcp.InitializeRequest{}
		req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
		req.Params.ClientInfo = mcp.Implementation{Name: "edgemcp-test", Version: "1"}
		res, err := c.Initialize(ctx, req)
		cancel()
		if err != nil {
			t.Fatalf("initialize: %v", err)
		}
		if res.ProtocolVersion == mcp.LATEST_PROTOCOL_VERSION {
			break
		}
		_ = c.Close()
		if attempt == 3 {
			t.Fatalf("negotiated %s, want %s", res.ProtocolVersion, mcp.LATEST_PROTOCOL_VERSION)
		}
		t.Logf("negotiated %s on attempt %d, want %s: trying a new client", res.ProtocolVersion, attempt, mcp.LATEST_PROTOCOL_VERSION)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// rawSession speaks JSON-RPC over plain HTTP so tests can read exact error
// codes (mcp-go's client folds -32000 into a plain error).
type rawSession struct {
	url     string
	session string
	version string
	nextID  int
}

type rpcResponse struct {
	Status int
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (g *gateway) rawSession(t testing.TB, version string) *rawSession {
	t.Helper()
	s := &rawSession{url: g.URL, version: version}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, version)
	resp, hdr := s.post(t, body)
	if resp.Error != nil {
		t.Fatalf("initialize: %+v", resp.Error)
	}
	s.session = hdr.Get("Mcp-Session-Id")
	s.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *rawSession) call(t testing.TB, tool string, args any) rpcResponse {
	t.Helper()
	s.nextID++
	a, _ := json.Marshal(args)
	resp, _ := s.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, s.nextID, tool, a))
	return resp
}

func (s *rawSession) post(t testing.TB, body string) (rpcResponse, http.Header) {
	t.Helper()
	return s.postWith(t, body, nil)
}

// postWith posts body with the session's headers, then header's (an empty
// value deletes a header).
func (s *rawSession) postWith(t testing.TB, body string, header map[string]string) (rpcResponse, http.Header) {
	t.Helper()
	res, raw := s.exchange(t, body, header)
	out := rpcResponse{Status: res.StatusCode}
	raw = bytes.TrimSpace(raw)
	if bytes.HasPrefix(raw, []byte("event:")) || bytes.HasPrefix(raw, []byte("data:")) || bytes.HasPrefix(raw, []byte("id:")) {
		// SSE: the last data line is the response.
		for _, line := range strings.Split(string(raw), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				raw = []byte(d)
			}
		}
	}
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("response %q: %v", raw, err)
		}
	}
	out.Status = res.StatusCode
	return out, res.Header
}

// exchange is postWith's request: the response (its body closed) and the
// body as it came.
func (s *rawSession) exchange(t testing.TB, body string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.session != "" {
		req.Header.Set("Mcp-Session-Id", s.session)
	}
	if s.version != "" && !strings.Contains(body, `"initialize"`) {
		req.Header.Set("Mcp-Protocol-Version", s.version)
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res, raw
}

// toolResult decodes a successful tools/call result.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]json.RawMessage `json:"structuredContent"`
	IsError           bool                       `json:"isError"`
}

func (r rpcResponse) tool(t testing.TB) toolResult {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("unexpected error %d: %s", r.Error.Code, r.Error.Message)
	}
	var out toolResult
	if err := json.Unmarshal(r.Result, &out); err != nil {
		t.Fatalf("result %s: %v", r.Result, err)
	}
	return out
}

// rows decodes the text block of a DB tool's result.
func (r toolResult) rows(t testing.TB) []map[string]any {
	t.Helper()
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		t.Fatalf("want one text block, got %+v", r.Content)
	}
	var rows []map[string]any
	dec := json.NewDecoder(strings.NewReader(r.Content[0].Text))
	dec.UseNumber()
	if err := dec.Decode(&rows); err != nil {
		t.Fatalf("text block %q: %v", r.Content[0].Text, err)
	}
	return rows
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, for at most 30 seconds: tests wait
// for an event, never for a fixed time that a busy machine may exceed.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
