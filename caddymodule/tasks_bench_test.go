package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
)

// BenchmarkServeTaskRound prints what a task round costs through
// ServeHTTP, in process, against the plain call of the same tool (a cache
// hit of a SQLite tool, on a 2025-11-25 session): the tools/call that
// makes the task, a tasks/get and the tasks/result, over the memory
// store. Without the call's log line.
//
//	go test ./caddymodule -run '^$' -bench ServeTaskRound -benchmem
func BenchmarkServeTaskRound(b *testing.B) {
	h := new(Handler)
	d := caddyfile.NewTestDispenser(fmt.Sprintf(`mcp {
		connector lite sqlite %s
		cache
		tool one {
			description "one row"
			use lite
			statement "SELECT {{ inputs.x }} AS x"
			input x int required
			cache 1h
			task optional
		}
	}`, filepath.Join(b.TempDir(), "bench.db")))
	if err := h.UnmarshalCaddyfile(d); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	if err := h.Provision(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = h.Cleanup() }()
	h.calls = telemetry.NewRecorder(zap.NewNop())
	var header map[string]string
	post := func(body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		_ = h.ServeHTTP(w, r, nil)
		return w
	}
	session := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`).Header().Get("Mcp-Session-Id")
	if session == "" {
		b.Fatal("no session")
	}
	header = map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"one","arguments":{"x":42}%s}}`

	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if w := post(fmt.Sprintf(call, "")); !strings.Contains(w.Body.String(), `\"x\":42`) {
				b.Fatal(w.Body)
			}
		}
	})
	b.Run("task", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var made struct {
				Result struct {
					Task struct {
						TaskID string `json:"taskId"`
					} `json:"task"`
				} `json:"result"`
			}
			w := post(fmt.Sprintf(call, `,"task":{}`))
			if err := json.Unmarshal(w.Body.Bytes(), &made); err != nil || made.Result.Task.TaskID == "" {
				b.Fatal(w.Body)
			}
			id := made.Result.Task.TaskID
			post(fmt.Sprintf(`{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"taskId":%q}}`, id))
			if w := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"tasks/result","params":{"taskId":%q}}`, id)); !strings.Contains(w.Body.String(), `\"x\":42`) {
				b.Fatal(w.Body)
			}
		}
	})
}
