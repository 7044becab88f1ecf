package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// upstreamServer is an in-process MCP server over streamable HTTP (mcp-go's
// server) on a loopback port, behind a bearer token check.
type upstreamServer struct {
	mcp  *server.MCPServer
	http *http.Server
	addr string
	// auth is the Authorization header of the last request.
	auth atomic.Value
	hits atomic.Int64
	h    atomic.Pointer[server.StreamableHTTPServer]
}

// reset replaces the MCP server behind the same listener: a restarted
// server that forgot its sessions.
func (u *upstreamServer) reset() {
	u.mcp = newMCPServer()
	u.h.Store(server.NewStreamableHTTPServer(u.mcp, server.WithStateful(true)))
}

func newMCPServer() *server.MCPServer {
	m := server.NewMCPServer("up", "1", server.WithToolCapabilities(true), server.WithPaginationLimit(2))
	for _, name := range []string{"a", "b", "c"} {
		m.AddTool(mcp.NewTool("echo."+name, mcp.WithDescription("echoes "+name), mcp.WithString("msg")),
			func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(req.GetString("msg", "")), nil
			})
	}
	m.AddTool(mcp.NewTool("slow"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-ctx.Done() // answers only when the call is given up
		return nil, ctx.Err()
	})
	m.AddTool(mcp.NewTool("fail"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("the disk is on fire")
	})
	return m
}

func startUpstream(t *testing.T, addr string) *upstreamServer {
	t.Helper()
	u := &upstreamServer{}
	u.reset()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	u.addr = l.Addr().String()
	u.http = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.auth.Store(r.Header.Get("Authorization"))
		u.hits.Add(1)
		if r.Header.Get("Authorization") != "Bearer up-token" || r.Header.Get("X-Tenant") != "t1" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		u.h.Load().ServeHTTP(w, r)
	})}
	go u.http.Serve(l)
	t.Cleanup(u.stop)
	return u
}

func (u *upstreamServer) stop() { _ = u.http.Close() }

func (u *upstreamServer) url() string { return "http://" + u.addr + "/mcp" }

func httpSource(url string) *Source {
	return &Source{URL: url, Transport: TransportStreamable, Config: upstream.Config{
		Credentials: []upstream.CredentialConfig{{Kind: "bearer", Token: "up-token"}},
		Headers:     map[string]string{"X-Tenant": "t1"},
	}}
}

func provision(t *testing.T, s *Source) {
	t.Helper()
	if err := provisionErr(t, s); err != nil {
		t.Fatal(err)
	}
}

// provisionErr provisions s, cleaned up when the test ends.
func provisionErr(t *testing.T, s *Source) error {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	t.Cleanup(func() { _ = s.Cleanup() })
	return s.Provision(ctx)
}

func call(t *testing.T, tools []*pipeline.Tool, name string, args map[string]any) (map[string]any, error) {
	t.Helper()
	for _, tl := range tools {
		if tl.Name == name {
			res, err := tl.Executor.Execute(context.Background(), &pipeline.Call{Tool: tl, Inputs: args})
			if err != nil {
				return nil, err
			}
			var out map[string]any
			if err := json.Unmarshal(res.Native, &out); err != nil {
				t.Fatal(err)
			}
			return out, nil
		}
	}
	t.Fatalf("no tool %s", name)
	return nil, nil
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHTTPSource: the bearer credential and the static header reach the
// server on every request; tools/list is followed across pages; names
// are namespaced with the server's own as alias; a JSON-RPC error is the
// server's message; the server's tools/list_changed brings the new list.
func TestHTTPSource(t *testing.T) {
	up := startUpstream(t, "")
	s := httpSource(up.url())
	provision(t, s)
	tools, err := s.Tools("up")
	if err != nil {
		t.Fatal(err)
	}
	var changes atomic.Int64
	s.OnChange(func() { changes.Add(1) })
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name+"="+strings.Join(tl.Aliases, ","))
	}
	if got := strings.Join(names, " "); got != "up_echo_a=echo.a up_echo_b=echo.b up_echo_c=echo.c up_fail=fail up_slow=slow" {
		t.Errorf("tools over 2 pages: %s", got)
	}
	if tools[0].Description != "echoes a" || !strings.Contains(string(tools[0].InputSchema), `"msg"`) {
		t.Errorf("echo.a: %+v", tools[0])
	}
	if a, _ := up.auth.Load().(string); a != "Bearer up-token" {
		t.Errorf("the server saw Authorization %q", a)
	}
	res, err := call(t, tools, "up_echo_b", map[string]any{"msg": "hi"})
	if err != nil || res["content"].([]any)[0].(map[string]any)["text"] != "hi" {
		t.Errorf("echo.b: %v %v", res, err)
	}
	_, err = call(t, tools, "up_fail", nil)
	var safe pipeline.SafeError
	if !errors.As(err, &safe) || !strings.Contains(safe.SafeMessage(), "the disk is on fire") {
		t.Errorf("fail: %v", err)
	}

	// A tool added upstream: list_changed → the new list, and the
	// gateway is told.
	up.mcp.AddTool(mcp.NewTool("late"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("late"), nil
	})
	waitUntil(t, "the change to be announced", func() bool { return changes.Load() > 0 })
	tools, _ = s.Tools("up")
	if res, err := call(t, tools, "up_late", nil); err != nil || res["content"].([]any)[0].(map[string]any)["text"] != "late" {
		t.Errorf("late: %v %v", res, err)
	}
}

// TestHTTPSourceDownAtLoad: a required source whose server is down fails
// the load; one not required serves no tools and, when the server comes
// up, connects in the background and announces its tools.
func TestHTTPSourceDownAtLoad(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	req := httpSource("http://" + addr + "/mcp")
	req.Required = true
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	if err := req.Provision(ctx); err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("required and down: %v", err)
	}

	s := httpSource("http://" + addr + "/mcp")
	provision(t, s)
	var mu sync.Mutex
	var seen []int
	s.OnChange(func() {
		tools, _ := s.Tools("up")
		mu.Lock()
		seen = append(seen, len(tools))
		mu.Unlock()
	})
	if tools, err := s.Tools("up"); err != nil || len(tools) != 0 {
		t.Fatalf("down: %d tools, %v", len(tools), err)
	}
	startUpstream(t, addr)
	waitUntil(t, "the tools to arrive", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) > 0 && seen[len(seen)-1] == 5
	})
}

// TestHTTPSourceReconnects: a call after the server restarted (its session
// forgotten) is sent again on a new session; while the server is down a
// call fails, and the next one after it is back succeeds.
func TestHTTPSourceReconnects(t *testing.T) {
	up := startUpstream(t, "")
	s := httpSource(up.url())
	provision(t, s)
	tools, _ := s.Tools("up")
	if _, err := call(t, tools, "up_echo_a", map[string]any{"msg": "1"}); err != nil {
		t.Fatal(err)
	}
	up.stop()
	if _, err := call(t, tools, "up_echo_a", map[string]any{"msg": "2"}); err == nil {
		t.Error("a call with the server down succeeded")
	}
	up = startUpstream(t, up.addr)
	res, err := call(t, tools, "up_echo_a", map[string]any{"msg": "3"})
	if err != nil || res["content"].([]any)[0].(map[string]any)["text"] != "3" {
		t.Errorf("after the restart: %v %v", res, err)
	}
	// A restarted server forgets the session: 404, sent again.
	up.reset()
	res, err = call(t, tools, "up_echo_a", map[string]any{"msg": "4"})
	if err != nil || res["content"].([]any)[0].(map[string]any)["text"] != "4" {
		t.Errorf("after the session was forgotten: %v %v", res, err)
	}
}

// TestTimeout: timeout bounds a call the server does not answer.
func TestTimeout(t *testing.T) {
	up := startUpstream(t, "")
	s := httpSource(up.url())
	s.Timeout = caddy.Duration(200 * time.Millisecond)
	provision(t, s)
	tools, _ := s.Tools("up")
	_, err := call(t, tools, "up_slow", nil)
	var safe pipeline.SafeError
	if !errors.As(err, &safe) || safe.SafeMessage() != "the MCP server did not answer in time" {
		t.Errorf("slow: %v", err)
	}
}

// TestChangeBeforeOnChange: tools that arrive after the gateway read the
// (empty) list but before it subscribed are announced at once.
func TestChangeBeforeOnChange(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := httpSource("http://" + addr + "/mcp")
	provision(t, s)
	if tools, _ := s.Tools("up"); len(tools) != 0 {
		t.Fatalf("%d tools while down", len(tools))
	}
	startUpstream(t, addr)
	waitUntil(t, "the background connect", func() bool { v := s.conn.version(); return v > 0 })
	// Announced at least once: a connect that finishes while OnChange
	// subscribes announces again, which is harmless (a re-list).
	called := make(chan struct{})
	var once sync.Once
	s.OnChange(func() { once.Do(func() { close(called) }) })
	select {
	case <-called:
	case <-time.After(30 * time.Second):
		t.Fatal("the tools that arrived before OnChange were never announced")
	}
}

// TestStderrLines: a child's stderr reaches the log a line at a time.
func TestStderrLines(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	l := &lineLogger{log: zap.New(core)}
	for _, chunk := range []string{"first li", "ne\nsecond line\r\n", "\nthird"} {
		if _, err := l.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, e := range logs.All() {
		got = append(got, e.ContextMap()["line"].(string))
	}
	if strings.Join(got, "|") != "first line|second line" {
		t.Errorf("logged %q", got)
	}
}

// TestSetFromIdentity: `set msg {{ auth.subject }}` fixes the upstream
// tools' msg argument to the verified caller's subject: it leaves their
// schemas, the server receives the subject, an argument of that name is
// refused before anything is sent, a call without identity fails in
// authentication.
func TestSetFromIdentity(t *testing.T) {
	u := startUpstream(t, "")
	s := httpSource(u.url())
	s.Set = map[string]string{"msg": "{{ auth.subject }}"}
	provision(t, s)
	tools, err := s.Tools("up")
	if err != nil {
		t.Fatal(err)
	}
	var echo *pipeline.Tool
	for _, tl := range tools {
		if tl.Name == "up_echo_a" {
			echo = tl
		}
	}
	if echo == nil || strings.Contains(string(echo.InputSchema), `"msg"`) || len(echo.FromIdentity) != 1 {
		t.Fatalf("echo.a: %+v", echo)
	}
	res, err := echo.Executor.Execute(context.Background(), &pipeline.Call{Tool: echo, Inputs: map[string]any{}, Identity: &pipeline.Identity{Subject: "alice"}})
	if err != nil || !strings.Contains(string(res.Native), `"text":"alice"`) {
		t.Fatalf("as alice: %v %s", err, res.Native)
	}
	hits := u.hits.Load()
	_, err = echo.Executor.Execute(context.Background(), &pipeline.Call{Tool: echo, Inputs: map[string]any{"msg": "mallory"}, Identity: &pipeline.Identity{Subject: "alice"}})
	var pe *pipeline.Error
	if !errors.As(err, &pe) || pe.Stage != pipeline.StageValidation {
		t.Errorf("msg as an argument: %v", err)
	}
	_, err = echo.Executor.Execute(context.Background(), &pipeline.Call{Tool: echo, Inputs: map[string]any{}})
	if !errors.As(err, &pe) || pe.Stage != pipeline.StageAuth {
		t.Errorf("no identity: %v", err)
	}
	if u.hits.Load() != hits {
		t.Error("a refused call reached the server")
	}
}
