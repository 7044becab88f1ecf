package caddymodule

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/guardrail"
	redisstore "github.com/edgemcp/edgemcp/stores/redis"
)

// The sql_tools and guardrail tests run the agent's toolset through the
// real gateway: Caddy, the mcp-go client or raw JSON-RPC, and the real
// databases.

// agentAnswer is a _query tool's answer.
type agentAnswer struct {
	Columns   []string `json:"columns"`
	Rows      [][]any  `json:"rows"`
	RowCount  int      `json:"row_count"`
	Truncated bool     `json:"truncated"`
	Reason    string   `json:"reason"`
}

func decodeAnswer(t testing.TB, r rpcResponse) agentAnswer {
	t.Helper()
	res := r.tool(t)
	var a agentAnswer
	if len(res.Content) != 1 || json.Unmarshal([]byte(res.Content[0].Text), &a) != nil {
		t.Fatalf("answer: %+v", res.Content)
	}
	return a
}

// refusedWith checks a -32000 whose message contains want.
func refusedWith(t testing.TB, what string, r rpcResponse, want string) {
	t.Helper()
	if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, want) {
		t.Errorf("%s: %+v, want -32000 saying %q", what, r.Error, want)
	}
}

// pgState is what a refused write must leave as it was: the rows of
// every table of schema, counted and hashed.
func pgState(t testing.TB, conn *pgx.Conn, schema string, tables ...string) string {
	t.Helper()
	var out []string
	for _, tbl := range tables {
		var n int64
		var sum string
		q := fmt.Sprintf("SELECT count(*), coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') FROM %s.%s t", schema, tbl)
		if err := conn.QueryRow(context.Background(), q).Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s:%d:%s", tbl, n, sum))
	}
	return strings.Join(out, " ")
}

const sqlToolsInterceptor = `export default function ({ sql, params, caller, tool }) {
	if (/\bssn\b/i.test(sql)) throw new Error("ssn is not for agents");
	if (sql === "first two") return { sql: "SELECT id, name FROM %s.items WHERE id <= $1 ORDER BY id", params: [2] };
}
`

// TestSQLToolsPostgres: sql_tools on Postgres as ordinary tools of the
// gateway: listed, described, queried through the mcp-go client; writes
// in several forms refused with the tables unchanged; a long answer cut
// and saying so; the cost guard refusing a cross join and admitting an
// indexed lookup; the interceptor rewriting one statement and refusing
// another; `requires` holding per session and `after ... deny` refusing
// once its trigger ran, on the direct path and through mcp-go alike.
func TestSQLToolsPostgres(t *testing.T) {
	conn := testservices.PostgresConn(t)
	schema := testservices.PostgresSchema(t, conn)
	for _, q := range []string{
		"CREATE TABLE " + schema + ".items (id int PRIMARY KEY, name text NOT NULL)",
		"COMMENT ON TABLE " + schema + ".items IS 'What we sell'",
		"INSERT INTO " + schema + ".items SELECT i, 'item ' || i FROM generate_series(1, 250) i",
		"CREATE TABLE " + schema + ".big_a (id int PRIMARY KEY, v int)",
		"CREATE TABLE " + schema + ".big_b (id int PRIMARY KEY, v int)",
		"INSERT INTO " + schema + ".big_a SELECT i, i FROM generate_series(1, 5000) i",
		"INSERT INTO " + schema + ".big_b SELECT i, i FROM generate_series(1, 5000) i",
		"CREATE TABLE " + schema + ".secrets (id int PRIMARY KEY, ssn text)",
		"CREATE SEQUENCE " + schema + ".counter",
		"ANALYZE " + schema + ".items",
		"ANALYZE " + schema + ".big_a",
		"ANALYZE " + schema + ".big_b",
	} {
		testservices.PostgresExec(t, conn, q)
	}
	intercept := filepath.Join(t.TempDir(), "intercept.js")
	writeFile(t, intercept, strings.ReplaceAll(sqlToolsInterceptor, "%s", schema))

	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		connector pg postgres %q
		sql_tools pg {
			prefix db
			exclude secrets
			max_rows 100
			max_cost 10000
			statement_timeout 5s
			interceptor %q
			explain
		}
		sql_tools pg {
			prefix guarded
			include %s.items
			requires guarded_describe_table
		}
		tool send_report {
			description "Sends the report"
			use pg
			statement "SELECT 'sent' AS status"
		}
		after guarded_query deny send_*
	}
}`, postgresURL(t), intercept, schema))

	// The mcp-go client (2026-07-28): listing, describing, querying.
	c := g.mcpClient(t)
	ctx := context.Background()
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if strings.HasPrefix(tool.Name, "db_") && (tool.Annotations.ReadOnlyHint == nil || !*tool.Annotations.ReadOnlyHint) {
			t.Errorf("%s: not annotated read-only", tool.Name)
		}
	}
	slices.Sort(names)
	if want := []string{"db_describe_table", "db_explain", "db_list_tables", "db_query", "guarded_describe_table", "guarded_list_tables", "guarded_query", "send_report"}; !slices.Equal(names, want) {
		t.Fatalf("tools/list: %q\nwant %q", names, want)
	}
	call := func(name string, args map[string]any) string {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			t.Fatalf("%s: %+v", name, res.Content)
		}
		return res.Content[0].(mcp.TextContent).Text
	}
	if got := call("db_list_tables", map[string]any{"schema": schema}); !strings.Contains(got, `"name":"items"`) || !strings.Contains(got, "What we sell") || strings.Contains(got, "secrets") {
		t.Errorf("db_list_tables: %s", got)
	}
	if got := call("guarded_list_tables", map[string]any{"schema": schema}); !strings.Contains(got, `"name":"items"`) || strings.Contains(got, "big_a") {
		t.Errorf("guarded_list_tables (include items): %s", got)
	}
	if got := call("db_describe_table", map[string]any{"table": schema + ".items"}); !strings.Contains(got, `"primary_key":["id"]`) {
		t.Errorf("db_describe_table: %s", got)
	}
	if got := call("db_query", map[string]any{"sql": "SELECT name FROM " + schema + ".items WHERE id = $1", "params": []any{7}}); got != `{"columns":["name"],"rows":[["item 7"]],"row_count":1,"truncated":false}` {
		t.Errorf("db_query: %s", got)
	}

	// Raw JSON-RPC on a session: exact codes, the direct path.
	s := g.rawSession(t, "2025-11-25")
	query := func(s *rawSession, sql string) rpcResponse {
		return s.call(t, "db_query", map[string]any{"sql": sql})
	}
	a := decodeAnswer(t, query(s, "SELECT id FROM "+schema+".items ORDER BY id"))
	if a.RowCount != 100 || !a.Truncated || a.Reason != "max_rows 100" {
		t.Errorf("250 rows under max_rows 100: %d rows, truncated %v (%q)", a.RowCount, a.Truncated, a.Reason)
	}

	before := pgState(t, conn, schema, "items", "big_a", "secrets")
	var seqBefore int64
	_ = conn.QueryRow(ctx, "SELECT last_value FROM "+schema+".counter").Scan(&seqBefore)
	for _, w := range []string{
		"DELETE FROM " + schema + ".items",
		"UPDATE " + schema + ".items SET name = 'x'",
		"WITH d AS (DELETE FROM " + schema + ".items RETURNING id) SELECT * FROM d",
		"SELECT * INTO " + schema + ".copy FROM " + schema + ".items",
		"SELECT 1; DELETE FROM " + schema + ".items",
		"DROP TABLE " + schema + ".items",
		"COPY " + schema + ".items TO STDOUT",
		"SELECT nextval('" + schema + ".counter')",
		"SELECT pg_catalog.\"set_config\"('role', 'postgres', false)",
		"SELECT lo_create(0)",
		"SELECT pg_advisory_lock(1)",
		"SELECT * FROM " + schema + ".items FOR UPDATE",
		"SELECT /* x */ 1 AS a; /* y */ TRUNCATE " + schema + ".items",
		"SELECT $$;DELETE FROM " + schema + ".items;$$ AS a; DELETE FROM " + schema + ".items",
	} {
		r := query(s, w)
		if r.Error == nil || r.Error.Code != -32000 {
			t.Errorf("%s: %+v, want a -32000 refusal", w, r.Error)
		}
	}
	var seqAfter int64
	_ = conn.QueryRow(ctx, "SELECT last_value FROM "+schema+".counter").Scan(&seqAfter)
	if after := pgState(t, conn, schema, "items", "big_a", "secrets"); after != before || seqAfter != seqBefore {
		t.Errorf("the database changed:\n%s\n%s (sequence %d → %d)", before, after, seqBefore, seqAfter)
	}
	refusedWith(t, "an excluded table", query(s, "SELECT id FROM "+schema+".secrets"), "sql guard: the statement names")

	// The cost guard.
	refusedWith(t, "a cross join", query(s, "SELECT count(*) FROM "+schema+".big_a a, "+schema+".big_b b"), "over max_cost 10000")
	if a := decodeAnswer(t, s.call(t, "db_query", map[string]any{"sql": "SELECT v FROM " + schema + ".big_a WHERE id = $1", "params": []any{4242}})); a.RowCount != 1 || fmt.Sprint(a.Rows[0][0]) != "4242" {
		t.Errorf("an indexed lookup: %+v", a)
	}

	// The interceptor: a rewrite, a refusal.
	if a := decodeAnswer(t, query(s, "first two")); a.RowCount != 2 || fmt.Sprint(a.Rows) != "[[1 item 1] [2 item 2]]" {
		t.Errorf("rewritten: %+v", a)
	}
	refusedWith(t, "the interceptor's refusal", query(s, "SELECT ssn FROM "+schema+".secrets"), "sql interceptor: refused: ssn is not for agents")

	// requires: per session. B's describe does not admit A's query.
	sa, sb := g.rawSession(t, "2025-11-25"), g.rawSession(t, "2025-11-25")
	guarded := func(s *rawSession) rpcResponse {
		return s.call(t, "guarded_query", map[string]any{"sql": "SELECT count(*) AS n FROM " + schema + ".items"})
	}
	refusedWith(t, "A before describe", guarded(sa), "guardrail: call guarded_describe_table first")
	sb.call(t, "guarded_describe_table", map[string]any{"table": "items", "schema": schema}).tool(t)
	refusedWith(t, "A after B's describe", guarded(sa), "call guarded_describe_table first")
	if a := decodeAnswer(t, guarded(sb)); a.RowCount != 1 {
		t.Errorf("B after its describe: %+v", a)
	}
	// A failed describe is no success.
	refusedWith(t, "describe of a hidden table", sa.call(t, "guarded_describe_table", map[string]any{"table": "big_a", "schema": schema}), "")
	refusedWith(t, "A after a failed describe", guarded(sa), "call guarded_describe_table first")

	// after guarded_query deny send_*: B ran guarded_query, A did not.
	sa.call(t, "send_report", nil).tool(t)
	refusedWith(t, "send_report after guarded_query", sb.call(t, "send_report", nil), "send_report is not allowed in this conversation any more: guarded_query has run in it")
	// The same refusal through mcp-go (an SSE-accepting client is not on the direct path).
	r, _ := sb.postWith(t, `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"send_report","arguments":{},"_meta":{"progressToken":"p1"}}}`, nil)
	refusedWith(t, "send_report through mcp-go", r, "guarded_query has run in it")

	// 2026-07-28 without a session or a verified caller: the guarded
	// tool is refused, saying why; unguarded tools run.
	if _, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "guarded_query", Arguments: map[string]any{"sql": "SELECT 1"}}}); err == nil || !strings.Contains(err.Error(), "no conversation id in _meta") {
		t.Errorf("sessionless guarded_query: %v", err)
	}
}

// TestSQLToolsRowLevelSecurity: the agent's own SQL on a connector with
// claims_setting, as two JWT tenants: the database's row-level security
// shows each its own rows whatever the statement, and the agent cannot
// change the claims with set_config. On 2026-07-28, requires keys on the
// verified caller and the conversation id in _meta: one conversation's
// success admits no other, nor another caller's with the same id.
func TestSQLToolsRowLevelSecurity(t *testing.T) {
	idp := newTestIdP(t)
	conn := testservices.PostgresConn(t)
	role := testservices.Name("edgemcp_rls")
	testservices.PostgresExec(t, conn, "CREATE ROLE "+role+" LOGIN NOSUPERUSER NOBYPASSRLS")
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP ROLE IF EXISTS "+role) })
	schema := testservices.PostgresSchema(t, conn)
	table := schema + ".docs"
	for _, q := range []string{
		"CREATE TABLE " + table + " (id int PRIMARY KEY, tenant text NOT NULL, title text NOT NULL)",
		"INSERT INTO " + table + " VALUES (1, 'acme', 'a1'), (2, 'acme', 'a2'), (3, 'globex', 'g1')",
		"ALTER TABLE " + table + " ENABLE ROW LEVEL SECURITY",
		"CREATE POLICY tenant_rows ON " + table + " USING (tenant = current_setting('request.jwt.claims', true)::json->>'tenant')",
		"GRANT USAGE ON SCHEMA " + schema + " TO " + role,
		"GRANT SELECT ON " + table + " TO " + role,
	} {
		testservices.PostgresExec(t, conn, q)
	}
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		auth sso jwt {
			jwks_url %s
			issuer %s
			audience %s
		}
		connector app postgres %q {
			claims_setting request.jwt.claims
		}
		sql_tools app {
			prefix db
			auth sso
			requires db_list_tables
		}
	}
}`, idp.jwks.URL, authIssuer, authAudience, testservices.PostgresURLWith(t, "user", role)))
	acme := idp.token(t, "alice", "", map[string]any{"tenant": "acme"}, time.Hour)
	globex := idp.token(t, "bob", "", map[string]any{"tenant": "globex"}, time.Hour)

	s := g.rawSession(t, "2025-11-25")
	callAs(t, s, acme, "db_list_tables", nil).tool(t)
	rows := func(r rpcResponse) string { return fmt.Sprint(decodeAnswer(t, r).Rows) }
	q := map[string]any{"sql": "SELECT title FROM " + table + " ORDER BY id"}
	if got := rows(callAs(t, s, acme, "db_query", q)); got != "[[a1] [a2]]" {
		t.Errorf("acme: %s", got)
	}
	if got := rows(callAs(t, s, globex, "db_query", map[string]any{"sql": "SELECT title FROM " + table + " WHERE true OR tenant <> 'globex' ORDER BY id"})); got != "[[g1]]" {
		t.Errorf("globex: %s", got)
	}
	r := callAs(t, s, globex, "db_query", map[string]any{"sql": `SELECT set_config('request.jwt.claims', '{"tenant":"acme"}', true), title FROM ` + table})
	refusedWith(t, "set_config", r, "sql guard")
	refusedWith(t, "no token", callAs(t, s, "", "db_query", q), "authentication")

	// 2026-07-28: the conversation is the verified caller and _meta's
	// conversationId.
	// viaMCPGo adds a progress token, which sends a call through mcp-go
	// instead of the direct path.
	viaMCPGo := false
	conv := func(token, id, tool string, args map[string]any) rpcResponse {
		t.Helper()
		raw := &rawSession{url: g.URL, version: "2026-07-28"}
		meta := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
		if viaMCPGo {
			meta += `,"progressToken":"p1"`
		}
		if id != "" {
			meta += fmt.Sprintf(`,"conversationId":%q`, id)
		}
		a, _ := json.Marshal(args)
		r, _ := raw.postWith(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{%s}}}`, tool, a, meta),
			map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": tool, "Authorization": "Bearer " + token})
		return r
	}
	c1, c2 := testservices.Name("conv"), testservices.Name("conv")
	refusedWith(t, "sessionless, no conversation id", conv(acme, "", "db_query", q), "the client sent no conversation id in _meta")
	refusedWith(t, "a new conversation", conv(acme, c1, "db_query", q), "call db_list_tables first")
	conv(acme, c1, "db_list_tables", nil).tool(t)
	if got := rows(conv(acme, c1, "db_query", q)); got != "[[a1] [a2]]" {
		t.Errorf("acme in %s: %s", c1, got)
	}
	refusedWith(t, "another conversation", conv(acme, c2, "db_query", q), "call db_list_tables first")
	refusedWith(t, "another caller, same id", conv(globex, c1, "db_query", q), "call db_list_tables first")
	viaMCPGo = true
	if got := rows(conv(acme, c1, "db_query", q)); got != "[[a1] [a2]]" {
		t.Errorf("acme in %s through mcp-go: %s", c1, got)
	}
	refusedWith(t, "another conversation through mcp-go", conv(acme, c2, "db_query", q), "call db_list_tables first")
	refusedWith(t, "no conversation id through mcp-go", conv(acme, "", "db_query", q), "the client sent no conversation id in _meta")
}

// TestSQLToolsSQLiteAndMariaDB: the toolset on the other two databases,
// each with its own dialect's parameters; a write refused on both; a
// set's rate limit and approval.
func TestSQLToolsSQLiteAndMariaDB(t *testing.T) {
	lite := filepath.Join(t.TempDir(), "shop.db")
	db, err := sql.Open("sqlite", lite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL); INSERT INTO items VALUES (1, 'lamp'), (2, 'desk')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	mariaTbl := testservices.MySQLTable(t, "items")
	testservices.MySQLExec(t, "CREATE TABLE "+mariaTbl+" (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL)")
	testservices.MySQLExec(t, "INSERT INTO "+mariaTbl+" VALUES (1, 'chair'), (2, 'shelf')")

	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		connector lite sqlite %q
		connector maria mysql %q
		sql_tools lite
		sql_tools lite {
			prefix limited
			rate_limit 1 per 1h
		}
		sql_tools lite {
			prefix asked
			approval required
			requires asked_list_tables
		}
		sql_tools maria {
			max_rows_estimate 1000
		}
	}
}`, lite, testservices.MySQLDSN(t)))
	s := g.rawSession(t, "2025-11-25")
	// A set's rate_limit applies to each of its tools, as a tool's does.
	s.call(t, "limited_list_tables", nil).tool(t)
	refusedWith(t, "over the set's rate_limit", s.call(t, "limited_list_tables", nil), "rate limited")
	s.call(t, "limited_describe_table", map[string]any{"table": "items"}).tool(t)
	// A set's approval applies to each of its tools; the guardrail comes
	// first, so no one is asked about a call it refuses.
	refusedWith(t, "approval", s.call(t, "asked_list_tables", nil), `approval: tool "asked_list_tables" needs approval through elicitation`)
	refusedWith(t, "guardrail before approval", s.call(t, "asked_query", map[string]any{"sql": "SELECT 1"}), "guardrail: call asked_list_tables first")
	if a := decodeAnswer(t, s.call(t, "lite_query", map[string]any{"sql": "SELECT name FROM items WHERE id = ?", "params": []any{2}})); fmt.Sprint(a.Rows) != "[[desk]]" {
		t.Errorf("sqlite: %+v", a)
	}
	if got := s.call(t, "lite_describe_table", map[string]any{"table": "items"}).tool(t).Content[0].Text; !strings.Contains(got, `"primary_key":["id"]`) {
		t.Errorf("sqlite describe: %s", got)
	}
	if a := decodeAnswer(t, s.call(t, "maria_query", map[string]any{"sql": "SELECT name FROM " + mariaTbl + " WHERE id = ?", "params": []any{1}})); fmt.Sprint(a.Rows) != "[[chair]]" {
		t.Errorf("mariadb: %+v", a)
	}
	refusedWith(t, "sqlite write", s.call(t, "lite_query", map[string]any{"sql": "DELETE FROM items"}), "")
	refusedWith(t, "mariadb write", s.call(t, "maria_query", map[string]any{"sql": "DELETE FROM " + mariaTbl}), "")
	var n int
	if err := testservices.MySQLDB(t).QueryRow("SELECT count(*) FROM " + mariaTbl).Scan(&n); err != nil || n != 2 {
		t.Errorf("mariadb rows after the refused write: %d, %v", n, err)
	}
	db, _ = sql.Open("sqlite", lite)
	defer db.Close()
	if err := db.QueryRow("SELECT count(*) FROM items").Scan(&n); err != nil || n != 2 {
		t.Errorf("sqlite rows after the refused write: %d, %v", n, err)
	}
}

// TestGuardrailsRedisStore: with `guardrails { store redis }` the
// gateway keeps its record in the Redis the nodes share: a second node
// (a guardrail with the same rules over its own client of that Redis)
// admits the session whose first call this gateway served, and refuses
// another session; the record expires after ttl.
func TestGuardrailsRedisStore(t *testing.T) {
	url := testservices.RedisURL(t)
	lite := filepath.Join(t.TempDir(), "g.db")
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		connector lite sqlite %q
		tool interpret {
			description "Interprets the question"
			use lite
			statement "SELECT 'ok' AS interpreted"
		}
		tool answer {
			description "Answers it"
			use lite
			statement "SELECT 42 AS answer"
			requires interpret
		}
		guardrails {
			store redis %s
			ttl 2m
		}
	}
}`, lite, url))
	sa, sb := g.rawSession(t, "2025-11-25"), g.rawSession(t, "2025-11-25")
	refusedWith(t, "answer first", sa.call(t, "answer", nil), "call interpret first")
	sa.call(t, "interpret", nil).tool(t)
	sa.call(t, "answer", nil).tool(t)

	shared, err := redisstore.Open(url, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	store, err := guardrail.NewShared(shared)
	if err != nil {
		t.Fatal(err)
	}
	rail, err := guardrail.New(guardrail.Config{Store: store, Requires: []guardrail.Requires{{Tool: "answer", Needs: "interpret"}}})
	if err != nil {
		t.Fatal(err)
	}
	answer := &pipeline.Tool{Name: "answer"}
	if err := rail.Admit(context.Background(), &pipeline.Call{Tool: answer, Request: &pipeline.RequestInfo{Session: sa.session}}); err != nil {
		t.Errorf("the other node, session A: %v", err)
	}
	if err := rail.Admit(context.Background(), &pipeline.Call{Tool: answer, Request: &pipeline.RequestInfo{Session: sb.session}}); err == nil {
		t.Error("the other node admitted session B")
	}
	// The record's keys are hashed; this gateway's are the ones whose
	// expiry is ttl 2m (other tests' records may share the Redis).
	rc := testservices.RedisClient(t)
	keys, err := rc.Keys(context.Background(), "guardrail:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, k := range keys {
		if ttl, err := rc.PTTL(context.Background(), k).Result(); err == nil && ttl > time.Minute && ttl <= 2*time.Minute {
			found++
		}
	}
	if found == 0 { // session A's interpret
		t.Errorf("%d guardrail keys expire within ttl 2m, want A's record", found)
	}
}

// TestSQLToolsRefusedAtLoad: what only provisioning can tell (the
// connector's driver, the tools that exist) fails the load, saying what.
func TestSQLToolsRefusedAtLoad(t *testing.T) {
	lite := filepath.Join(t.TempDir(), "r.db")
	base := func(extra string) string {
		return fmt.Sprintf(`SITE {
	mcp /mcp {
		connector lite sqlite %q
		connector kv redis %q
		tool ping {
			description "Pings"
			use lite
			statement "SELECT 1 AS pong"
		}
		%s
	}
}`, lite, testservices.RedisURL(t), extra)
	}
	g := startGateway(t, base("sql_tools lite"))
	for _, tc := range []struct{ name, extra, want string }{
		{"not an agent connector", "sql_tools kv", `sql_tools kv: connector "kv" (redis) cannot run SQL an agent writes`},
		{"no such connector", "sql_tools nope", `sql_tools nope: no connector of that name`},
		{"cost guard on sqlite", "sql_tools lite {\n\t\t\tmax_cost 10\n\t\t}", `max_cost and max_rows_estimate need a planner estimate`},
		{"role on sqlite", "sql_tools lite {\n\t\t\trole reader\n\t\t}", `role applies to PostgreSQL`},
		{"requires an unknown tool", "sql_tools lite {\n\t\t\trequires lite_describe\n\t\t}", `tool "lite_query": requires lite_describe: no tool of that name`},
		{"after an unknown tool", "after nothing_* deny ping", `"nothing_*" names no tool`},
		{"interceptor missing", "sql_tools lite {\n\t\t\tinterceptor /nonexistent/i.js\n\t\t}", `sql_tools lite: interceptor:`},
		{"tool clash", "sql_tools lite {\n\t\t\tprefix p\n\t\t}\n\t\ttool p_query {\n\t\t\tdescription \"x\"\n\t\t\tuse lite\n\t\t\tstatement \"SELECT 1 AS x\"\n\t\t}", `"p_query" declared twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := g.load(base(tc.extra)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("load: %v\nwant %q", err, tc.want)
			}
		})
	}
}

// TestGuardrailsThroughCallTool: in search mode the tools run through
// call_tool, which passes the same guardrail: refused before the tool
// required has run in the session, admitted after; another session's
// success does not count.
func TestGuardrailsThroughCallTool(t *testing.T) {
	lite := filepath.Join(t.TempDir(), "c.db")
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		connector lite sqlite %q
		sql_tools lite {
			requires lite_list_tables
		}
		discovery search
	}
}`, lite))
	sa, sb := g.rawSession(t, "2025-11-25"), g.rawSession(t, "2025-11-25")
	via := func(s *rawSession, tool string, args map[string]any) rpcResponse {
		return s.call(t, "call_tool", map[string]any{"name": tool, "arguments": args})
	}
	q := map[string]any{"sql": "SELECT 1 AS one"}
	refusedWith(t, "call_tool before list_tables", via(sa, "lite_query", q), "call lite_list_tables first")
	via(sb, "lite_list_tables", map[string]any{}).tool(t)
	refusedWith(t, "call_tool after another session's list_tables", via(sa, "lite_query", q), "call lite_list_tables first")
	if a := decodeAnswer(t, via(sb, "lite_query", q)); fmt.Sprint(a.Rows) != "[[1]]" {
		t.Errorf("call_tool after list_tables: %+v", a)
	}
}
