package caddymodule

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// readLog returns the JSON lines Caddy wrote to path.
func readLog(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	return lines
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// TestCallLogLine runs the real Caddy with the mcp logger at DEBUG into a
// JSON file: every call, on both transport paths, writes exactly one info
// line with tool, outcome, code, duration, request id and JSON-RPC id; a
// failure adds its stage at info and its message and cause at debug only;
// the connection string's password is in no line at any level, and no
// input value is in any info line.
func TestCallLogLine(t *testing.T) {
	obsSchema(t)
	dsn, password := obsDSN(t)
	cfg := obsCaddyfile(t, dsn, "", "")
	logFile := filepath.Join(t.TempDir(), "mcp.log")
	g := startGateway(t, cfg)
	g.globals = fmt.Sprintf("\tlog obs {\n\t\toutput file %s\n\t\tformat json\n\t\tlevel DEBUG\n\t\tinclude http.handlers.mcp\n\t}\n", logFile)
	if err := g.load(cfg); err != nil {
		t.Fatal(err)
	}

	raw := g.rawSession(t, "2025-06-18")
	raw.call(t, "obs-find", map[string]any{"email": secretInput}).tool(t)
	raw.call(t, "obs-get", map[string]any{"id": secretBadInput})
	raw.call(t, "obs-broken", nil)
	if resp := raw.call(t, "obs-nope", nil); resp.Error == nil || resp.Error.Code != -32601 {
		t.Fatalf("unknown tool: %+v", resp)
	}
	c := g.mcpClient(t)
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "obs-find", map[string]any{"email": secretInput}
	if _, err := c.CallTool(context.Background(), req); err != nil {
		t.Fatal(err)
	}

	var calls, failures []map[string]any
	deadline := time.Now().Add(5 * time.Second)
	for {
		calls, failures = nil, nil
		for _, l := range readLog(t, logFile) {
			switch l["msg"] {
			case "tool call":
				calls = append(calls, l)
			case "tool call failed":
				failures = append(failures, l)
			}
		}
		if len(calls) >= 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(calls) != 5 || len(failures) != 3 {
		t.Fatalf("%d info lines and %d debug failure lines, want 5 and 3: %v %v", len(calls), len(failures), calls, failures)
	}
	want := []struct {
		tool, outcome, stage, jsonrpcID string
		code                            float64
	}{
		{"obs-find", "ok", "", "1", 0},
		{"obs-get", "error", "input_validation", "2", -32000},
		{"obs-broken", "error", "execution", "3", -32000},
		{"_unknown", "error", "tool_resolution", "4", -32601},
		{"obs-find", "ok", "", "", 0}, // mcp-go's client numbers its own requests
	}
	ids := map[string]bool{}
	for i, w := range want {
		l := calls[i]
		if l["level"] != "info" || l["logger"] != "http.handlers.mcp" || l["tool"] != w.tool || l["outcome"] != w.outcome || l["code"] != w.code {
			t.Errorf("line %d: %v, want %+v", i, l, w)
		}
		if stage, _ := l["stage"].(string); stage != w.stage {
			t.Errorf("line %d: stage %q, want %q", i, stage, w.stage)
		}
		if w.jsonrpcID != "" && l["jsonrpc_id"] != w.jsonrpcID {
			t.Errorf("line %d: jsonrpc_id %v, want %s", i, l["jsonrpc_id"], w.jsonrpcID)
		}
		if _, ok := l["jsonrpc_id"].(string); !ok {
			t.Errorf("line %d has no jsonrpc_id: %v", i, l)
		}
		id, _ := l["request_id"].(string)
		if !uuidPattern.MatchString(id) || ids[id] {
			t.Errorf("line %d: request_id %q is not a fresh uuid", i, id)
		}
		ids[id] = true
		if d, ok := l["duration"].(float64); !ok || d <= 0 {
			t.Errorf("line %d: duration %v", i, l["duration"])
		}
		if requested, _ := l["requested_tool"].(string); (w.tool == "_unknown") != (requested == "obs-nope") {
			t.Errorf("line %d: requested_tool %q", i, requested)
		}
		for _, k := range []string{"message", "cause", "cache", "subject"} {
			if _, ok := l[k]; ok {
				t.Errorf("line %d: unexpected %s: %v", i, k, l)
			}
		}
	}
	if failures[0]["level"] != "debug" || !strings.Contains(fmt.Sprint(failures[0]["message"]), "expected integer") {
		t.Errorf("debug line of the validation failure: %v", failures[0])
	}
	if !strings.Contains(fmt.Sprint(failures[1]["cause"]), "obs_telemetry.missing") {
		t.Errorf("debug line of the query failure lacks the driver's cause: %v", failures[1])
	}

	content, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(content), password) {
		t.Errorf("the log holds the connection string's password")
	}
	for _, l := range calls {
		line, _ := json.Marshal(l)
		for _, secret := range []string{secretInput, secretBadInput, password} {
			if strings.Contains(string(line), secret) {
				t.Errorf("info line holds %q: %s", secret, line)
			}
		}
	}
}
