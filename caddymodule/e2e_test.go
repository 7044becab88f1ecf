package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// e2eSchema creates the tables the end-to-end Caddyfile queries.
func e2eSchema(t testing.TB) {
	t.Helper()
	db := testDB(t)
	execSQL(t, db, `DROP SCHEMA IF EXISTS edgemcp_e2e CASCADE`)
	execSQL(t, db, `CREATE SCHEMA edgemcp_e2e`)
	execSQL(t, db, `CREATE TABLE edgemcp_e2e.users (
		id int8 PRIMARY KEY, name text NOT NULL, email text NOT NULL,
		created_at timestamptz NOT NULL, balance numeric NOT NULL, meta jsonb)`)
	execSQL(t, db, `INSERT INTO edgemcp_e2e.users VALUES
		(1, 'Ada', 'ada@example.com', '2024-01-02T03:04:05Z', 12.50, '{"tier":"gold"}'),
		(2, 'Grace', 'grace@example.com', '2024-02-03T04:05:06Z', 1234567890123456789012.5, null),
		(9007199254740993, 'Big', 'big@example.com', '2024-03-04T05:06:07Z', 0, '[1,2]')`)
	// A write no lexer can see (a CTE write is refused at load): only the
	// database's READ ONLY transaction stops it.
	execSQL(t, db, `CREATE FUNCTION edgemcp_e2e.sneaky() RETURNS int8 LANGUAGE sql AS $$ INSERT INTO edgemcp_e2e.users VALUES (77, 'x', 'x', now(), 0, null) RETURNING id $$`)
	t.Cleanup(func() { execSQL(t, testDB(t), `DROP SCHEMA IF EXISTS edgemcp_e2e CASCADE`) })
}

func e2eCaddyfile(t testing.TB, extra string) string {
	seed, _ := filepath.Abs("../examples/data/demo.sql")
	lite := filepath.Join(t.TempDir(), "demo.db")
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		name e2e-gateway
		version 9.9.9
		%s
		connector main postgres %s {
			max_conns 4
			read_only
			statement_timeout 2s
			block_functions only dblink* # the slow tool sleeps
		}
		connector lite sqlite %s {
			read_only
			seed %s
		}
		tool get-user {
			description "Fetch a user by id"
			use main
			statement <<SQL
				SELECT id, name, email, created_at, balance, meta
				FROM edgemcp_e2e.users WHERE id = {{ inputs.user_id }}
				SQL
			input user_id int required "The user's primary key"
		}
		tool list-users {
			description "List users"
			use main
			statement "SELECT id, name FROM edgemcp_e2e.users ORDER BY {{ inputs.sort }} LIMIT {{ inputs.n }}"
			input sort string default id enum id|name
			input n int default 10
		}
		tool broken {
			description "Queries a table that does not exist"
			use main
			statement "SELECT * FROM edgemcp_e2e.no_such_table"
		}
		tool sneaky-write {
			description "A write hidden in a function"
			use main
			statement "SELECT edgemcp_e2e.sneaky() AS id"
		}
		tool slow {
			description "Sleeps"
			use main
			statement "SELECT pg_sleep({{ inputs.seconds }}) AS slept"
			input seconds float required
		}
		tool customer {
			description "A customer of the demo database"
			use lite
			statement "SELECT id, name, created_at FROM customers WHERE id = {{ inputs.id }}"
			input id int required
		}
	}
}`, extra, postgresURL(t), lite, seed)
}

func TestEndToEndMCPGoClient(t *testing.T) {
	e2eSchema(t)
	g := startGateway(t, e2eCaddyfile(t, ""))
	c := g.mcpClient(t)
	ctx := context.Background()

	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]mcp.Tool{}
	for _, tool := range list.Tools {
		byName[tool.Name] = tool
	}
	if len(byName) != 6 {
		t.Fatalf("tools/list: %d tools", len(byName))
	}
	getUser := byName["get-user"]
	if sc := getUser.InputSchema; sc.Type != "object" || len(sc.Required) != 1 || sc.Required[0] != "user_id" ||
		sc.Properties["user_id"].(map[string]any)["type"] != "integer" {
		t.Errorf("get-user schema as mcp-go reads it: %+v", sc)
	}
	if ro := getUser.Annotations.ReadOnlyHint; ro == nil || !*ro {
		t.Errorf("read_only connector: readOnlyHint = %v", ro)
	}

	req := mcp.CallToolRequest{}
	req.Params.Name = "get-user"
	req.Params.Arguments = map[string]any{"user_id": 1}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(mcp.TextContent).Text
	want := `[{"id":1,"name":"Ada","email":"ada@example.com","created_at":"2024-01-02T03:04:05Z","balance":12.50,"meta":{"tier":"gold"}}]`
	if text != want {
		t.Errorf("get-user text\n got %s\nwant %s", text, want)
	}
	if res.StructuredContent == nil {
		t.Error("latest protocol: structuredContent missing")
	}

	req.Params.Name = "no-such-tool"
	if _, err := c.CallTool(ctx, req); !errors.Is(err, mcp.ErrMethodNotFound) {
		t.Errorf("unknown tool through mcp-go client: %v, want method-not-found (-32601)", err)
	}

	// SQLite tool on the seeded demo database.
	req.Params.Name = "customer"
	req.Params.Arguments = map[string]any{"id": 3}
	res, err = c.CallTool(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(mcp.TextContent).Text; text != `[{"id":3,"name":"Alan Turing","created_at":"2024-03-10T08:15:00Z"}]` {
		t.Errorf("sqlite customer: %s", text)
	}
}

func TestEndToEndWireErrors(t *testing.T) {
	e2eSchema(t)
	g := startGateway(t, e2eCaddyfile(t, ""))
	s := g.rawSession(t, "2025-06-18")

	tests := []struct {
		name    string
		tool    string
		args    any
		code    int
		message []string // substrings
	}{
		{"unknown tool", "nope", map[string]any{}, -32601, []string{`tool resolution: tool "nope" not found`}},
		{"validation fraction", "get-user", map[string]any{"user_id": 42.5}, -32000, []string{`input validation: input "user_id": expected integer, got 42.5`}},
		{"validation missing", "get-user", map[string]any{}, -32000, []string{`input validation: input "user_id": required`}},
		{"validation unknown input", "get-user", map[string]any{"user_id": 1, "admin": true}, -32000, []string{`input "admin": unknown input`}},
		{"enum refused", "list-users", map[string]any{"sort": "email; DROP TABLE x"}, -32000, []string{`input "sort": expected one of id, name`}},
		// error_detail safe (the default): the SQLSTATE and the request id,
		// not the server's text (checked below).
		{"query error", "broken", map[string]any{}, -32000, []string{`execution: query failed (SQLSTATE 42P01, request_id `}},
		{"read only refuses hidden write", "sneaky-write", map[string]any{}, -32000, []string{`execution: query failed (SQLSTATE 25006, request_id `}},
		{"statement timeout", "slow", map[string]any{"seconds": 5}, -32000, []string{`statement timed out`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.call(t, tt.tool, tt.args)
			if r.Error == nil {
				t.Fatalf("want error %d, got result %s", tt.code, r.Result)
			}
			if r.Error.Code != tt.code {
				t.Errorf("code %d, want %d (%s)", r.Error.Code, tt.code, r.Error.Message)
			}
			for _, sub := range tt.message {
				if !strings.Contains(r.Error.Message, sub) {
					t.Errorf("message %q lacks %q", r.Error.Message, sub)
				}
			}
			for _, secret := range []string{"postgres://", "127.0.0.1", "user=", "password", "does not exist", "read-only transaction"} {
				if strings.Contains(r.Error.Message, secret) {
					t.Errorf("message leaks %q: %s", secret, r.Error.Message)
				}
			}
		})
	}
	var n int
	if err := testDB(t).QueryRow(context.Background(), `SELECT count(*) FROM edgemcp_e2e.users`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("users after refused write: %d %v", n, err)
	}

	// Integers beyond 2^53 arrive exactly (the body is decoded with UseNumber).
	rows := s.call(t, "get-user", json.RawMessage(`{"user_id": 9007199254740993}`)).tool(t).rows(t)
	if len(rows) != 1 || rows[0]["id"] != "9007199254740993" {
		t.Fatalf("big id: %v", rows)
	}
	// Enum identifiers work in ORDER BY.
	rows = s.call(t, "list-users", map[string]any{"sort": "name", "n": 2}).tool(t).rows(t)
	if len(rows) != 2 || rows[0]["name"] != "Ada" || rows[1]["name"] != "Big" {
		t.Fatalf("list-users by name: %v", rows)
	}
}

func TestEndToEndStructuredContentByVersion(t *testing.T) {
	e2eSchema(t)
	g := startGateway(t, e2eCaddyfile(t, ""))
	for _, tt := range []struct {
		version    string
		structured bool
	}{{"2025-03-26", false}, {"2025-06-18", true}, {"2025-11-25", true}} {
		s := g.rawSession(t, tt.version)
		res := s.call(t, "get-user", map[string]any{"user_id": 2}).tool(t)
		if got := res.StructuredContent != nil; got != tt.structured {
			t.Errorf("%s: structuredContent present = %v", tt.version, got)
		}
		if tt.structured {
			var sc []map[string]any
			dec := json.NewDecoder(strings.NewReader(string(res.StructuredContent["results"])))
			dec.UseNumber()
			if err := dec.Decode(&sc); err != nil || len(sc) != 1 || sc[0]["balance"] != "1234567890123456789012.5" {
				t.Errorf("%s: structuredContent %s (%v)", tt.version, res.StructuredContent["results"], err)
			}
		}
	}
}

func TestEndToEndErrorModeResult(t *testing.T) {
	e2eSchema(t)
	g := startGateway(t, e2eCaddyfile(t, "error_mode result"))
	s := g.rawSession(t, "2025-11-25")
	r := s.call(t, "get-user", map[string]any{"user_id": "x"})
	res := r.tool(t)
	if !res.IsError || !strings.Contains(res.Content[0].Text, `input validation: input "user_id": expected integer, got "x"`) {
		t.Fatalf("error_mode result: %+v", res)
	}
	res = s.call(t, "broken", map[string]any{}).tool(t)
	if !res.IsError || !strings.Contains(res.Content[0].Text, "42P01") {
		t.Fatalf("error_mode result, query error: %+v", res)
	}
	// An unknown tool is a protocol error in either mode.
	if r := s.call(t, "nope", map[string]any{}); r.Error == nil || r.Error.Code != -32601 {
		t.Fatalf("unknown tool in result mode: %+v", r)
	}
}

func TestEndToEndBodyLimit(t *testing.T) {
	e2eSchema(t)
	g := startGateway(t, e2eCaddyfile(t, "max_body_size 4KiB"))
	s := g.rawSession(t, "2025-11-25")
	r := s.call(t, "get-user", map[string]any{"user_id": 1, "pad": strings.Repeat("x", 5000)})
	if r.Status != http.StatusRequestEntityTooLarge || r.Error == nil || r.Error.Code != -32600 {
		t.Fatalf("oversized body: status %d %+v", r.Status, r.Error)
	}
	// The session still works afterwards.
	if rows := s.call(t, "get-user", map[string]any{"user_id": 1}).tool(t).rows(t); len(rows) != 1 {
		t.Fatal("call after oversized body failed")
	}
}

// TestEndToEndClientGoneCancelsQuery: a client that disconnects mid-call
// cancels its statement in Postgres.
func TestEndToEndClientGoneCancelsQuery(t *testing.T) {
	e2eSchema(t)
	g := startGateway(t, strings.Replace(e2eCaddyfile(t, ""), "statement_timeout 2s", "statement_timeout 60s", 1))
	s := g.rawSession(t, "2025-11-25")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	body := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":30}}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("the 30 s call returned within 500 ms")
	}
	db := testDB(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int
		if err := db.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(%' AND state = 'active'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pg_sleep statements still running 5 s after the client left", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestEndToEndToolsListSchema pins the exact tools/list entry on the wire.
func TestEndToEndToolsListSchema(t *testing.T) {
	e2eSchema(t)
	g := startGateway(t, e2eCaddyfile(t, ""))
	s := g.rawSession(t, "2025-11-25")
	r, _ := s.post(t, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
	var list struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(r.Result, &list); err != nil || len(list.Tools) != 6 {
		t.Fatalf("tools/list: %s %v", r.Result, err)
	}
	want := map[string]string{
		"get-user":   `{"annotations":{"readOnlyHint":true},"description":"Fetch a user by id","inputSchema":{"type":"object","properties":{"user_id":{"type":"integer","description":"The user's primary key"}},"required":["user_id"],"additionalProperties":false},"name":"get-user"}`,
		"list-users": `{"annotations":{"readOnlyHint":true},"description":"List users","inputSchema":{"type":"object","properties":{"sort":{"type":"string","enum":["id","name"],"default":"id"},"n":{"type":"integer","default":10}},"required":[],"additionalProperties":false},"name":"list-users"}`,
	}
	for _, raw := range list.Tools {
		var probe struct{ Name string }
		_ = json.Unmarshal(raw, &probe)
		w, ok := want[probe.Name]
		if !ok {
			continue
		}
		var a, b any
		_ = json.Unmarshal(raw, &a)
		_ = json.Unmarshal([]byte(w), &b)
		ab, _ := json.Marshal(a)
		bb, _ := json.Marshal(b)
		if string(ab) != string(bb) {
			t.Errorf("%s\n got %s\nwant %s", probe.Name, ab, bb)
		}
		delete(want, probe.Name)
	}
	if len(want) > 0 {
		t.Errorf("missing from tools/list: %v", want)
	}
}

// TestEndToEndOriginAndHost: browsers' cross-site requests and DNS
// rebinding (a foreign Host on the loopback listener) are refused.
func TestEndToEndOriginAndHost(t *testing.T) {
	e2eSchema(t)
	g := startGateway(t, e2eCaddyfile(t, "allowed_origins https://app.example.com"))
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"o","version":"1"}}}`
	for _, tt := range []struct {
		name, host, origin string
		status             int
	}{
		{"no origin", "", "", 200},
		{"same origin", "", fmt.Sprintf("http://127.0.0.1:%d", g.port), 200},
		{"allowed origin", "", "https://app.example.com", 200},
		{"foreign origin", "", "https://evil.example.com", 403},
		{"rebinding host", "evil.example.com", "http://evil.example.com", 403},
		{"localhost host", fmt.Sprintf("localhost:%d", g.port), "", 200},
	} {
		req, _ := http.NewRequest(http.MethodPost, g.URL, strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		if tt.host != "" {
			req.Host = tt.host
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d", tt.name, res.StatusCode, tt.status)
		}
	}
}

// TestEndToEndMaxRows: a statement returning more rows than max_rows, or
// a result counting more bytes than max_result_size, fails cleanly instead
// of buffering an unbounded result, and the connector serves the next call.
func TestEndToEndMaxRows(t *testing.T) {
	seed, _ := filepath.Abs("../examples/data/demo.sql")
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		connector lite sqlite %s {
			seed %s
			max_rows 3
		}
		connector pg postgres %s {
			max_rows 3
			max_result_size 1000
		}
		tool customers {
			description "All customers"
			use lite
			statement "SELECT id FROM customers ORDER BY id LIMIT {{ inputs.n }}"
			input n int required
		}
		tool series {
			description "A series"
			use pg
			statement "SELECT generate_series(1, {{ inputs.n }}) AS i"
			input n int required
		}
		tool text {
			description "A text of n bytes"
			use pg
			statement "SELECT repeat('x', {{ inputs.n }}) AS v"
			input n int required
		}
	}
}`, filepath.Join(t.TempDir(), "demo.db"), seed, postgresURL(t)))
	s := g.rawSession(t, "2025-11-25")
	for _, tool := range []string{"customers", "series"} {
		if rows := s.call(t, tool, map[string]any{"n": 3}).tool(t).rows(t); len(rows) != 3 {
			t.Fatalf("%s: %d rows at the limit", tool, len(rows))
		}
		r := s.call(t, tool, map[string]any{"n": 4})
		if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "more than 3 rows (max_rows)") {
			t.Fatalf("%s over max_rows: %+v", tool, r.Error)
		}
	}
	// A value counts its bytes plus 16.
	if rows := s.call(t, "text", map[string]any{"n": 984}).tool(t).rows(t); len(rows) != 1 {
		t.Fatalf("text: %d rows at max_result_size", len(rows))
	}
	r := s.call(t, "text", map[string]any{"n": 985})
	if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "the result is larger than 1000 bytes (max_result_size)") {
		t.Fatalf("text over max_result_size: %+v", r.Error)
	}
	if rows := s.call(t, "series", map[string]any{"n": 2}).tool(t).rows(t); len(rows) != 2 {
		t.Fatalf("series after the refusal: %d rows", len(rows))
	}
}
