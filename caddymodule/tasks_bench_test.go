package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkServeTaskRound prints what a task round costs through
// ServeHTTP, in process, against the plain call of the same tool (a cache
// hit of a SQLite tool, on a 2025-11-25 session): the tools/call that
// makes the task, a tasks/get and the tasks/result, over the memory
// store. Without the call's log line.
//
//	go test ./caddymodule -run '^$' -bench ServeTaskRound -benchmem
func BenchmarkServeTaskRound(b *testing.B) {
	serve := benchHandler(b, fmt.Sprintf(`mcp {
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
	header := benchSession(b, serve)
	post := func(body string) *httptest.ResponseRecorder { return serve(body, header) }
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
