package fastpath

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/mark3labs/mcp-go/mcp"
)

// answering is a tool whose result is answer.
func answering(answer string) *pipeline.Tool {
	return &pipeline.Tool{Name: "versioned", Executor: pipeline.ExecutorFunc(func(context.Context, *pipeline.Call) (*pipeline.Result, error) {
		return &pipeline.Result{Value: answer}, nil
	})}
}

// TestCallKeepsItsRegistry: a call runs on the tool set it resolved when
// it was inspected, even when a new set is swapped in before it is
// answered, on the direct path and on mcp-go's (its tool handler).
func TestCallKeepsItsRegistry(t *testing.T) {
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"versioned","arguments":{}}}`
	for _, path := range []string{"direct", "mcp-go"} {
		s := newTestServer(t, answering("first"))
		r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		call := s.Inspect([]byte(body), r)
		if call == nil || call.Failure() != nil {
			t.Fatalf("%s: not inspected: %+v", path, call)
		}
		s.shell.(*testShell).set(t, answering("second"))
		r = r.WithContext(WithCall(r.Context(), call))
		var got string
		if path == "direct" {
			w := httptest.NewRecorder()
			if !s.Answer(w, r, call) {
				t.Fatal("not answered on the direct path")
			}
			got = w.Body.String()
		} else {
			req := mcp.CallToolRequest{}
			req.Params.Name = "versioned"
			res, err := s.ToolHandler("versioned")(r.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			got = res.Content[0].(mcp.TextContent).Text
		}
		if !strings.Contains(got, "first") || strings.Contains(got, "second") {
			t.Errorf("%s: the call ran on the new set: %s", path, got)
		}
	}
}
