package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline/sqlagent"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// agentFixture is a schema an agent explores: items (a serial key, a
// comment), orders (a foreign key to items, an index), secrets (to be
// hidden), and functions with side effects of every kind a read-only
// transaction might let through.
type agentFixture struct {
	admin  *pgx.Conn
	schema string
}

func newAgentFixture(t *testing.T) agentFixture {
	t.Helper()
	admin := testservices.PostgresConn(t)
	s := testservices.PostgresSchema(t, admin)
	for _, q := range []string{
		"CREATE TABLE " + s + ".items (id serial PRIMARY KEY, name text NOT NULL, price numeric(8,2) DEFAULT 0)",
		"COMMENT ON TABLE " + s + ".items IS 'Things we sell'",
		"COMMENT ON COLUMN " + s + ".items.price IS 'In euros'",
		"CREATE TABLE " + s + ".orders (id int PRIMARY KEY, item_id int NOT NULL REFERENCES " + s + ".items(id), qty int NOT NULL)",
		"CREATE INDEX orders_item ON " + s + ".orders (item_id, qty)",
		"CREATE TABLE " + s + ".secrets (id int PRIMARY KEY, ssn text)",
		"INSERT INTO " + s + ".items (name, price) SELECT 'item ' || g, g FROM generate_series(1, 10) g",
		"INSERT INTO " + s + ".orders SELECT g, 1 + g % 10, g FROM generate_series(1, 30) g",
		"INSERT INTO " + s + ".secrets VALUES (1, '123-45-6789')",
		"CREATE FUNCTION " + s + ".bump() RETURNS int LANGUAGE sql VOLATILE AS $$ INSERT INTO " + s + ".items (name) VALUES ('bumped') RETURNING id $$",
		"CREATE FUNCTION " + s + ".stash() RETURNS oid LANGUAGE sql VOLATILE AS $$ SELECT lo_from_bytea(0, 'stashed') $$",
		"CREATE FUNCTION " + s + ".tune() RETURNS text LANGUAGE sql VOLATILE AS $$ SELECT set_config('work_mem', '64kB', false) $$",
		"CREATE FUNCTION " + s + ".hold() RETURNS void LANGUAGE sql VOLATILE AS $$ SELECT pg_advisory_lock(4242) $$",
		"ANALYZE " + s + ".items",
		"ANALYZE " + s + ".orders",
	} {
		testservices.PostgresExec(t, admin, q)
	}
	return agentFixture{admin: admin, schema: s}
}

// state sums up everything a write could change: each table's rows
// (count and checksum), the sequence, the schema's relations and
// functions, large objects and advisory locks anywhere in the server.
func (f agentFixture) state(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, table := range []string{"items", "orders", "secrets"} {
		var n int64
		var sum string
		q := fmt.Sprintf("SELECT count(*), coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') FROM %s.%s t", f.schema, table)
		if err := f.admin.QueryRow(ctx, q).Scan(&n, &sum); err != nil {
			t.Fatalf("state: %v", err)
		}
		fmt.Fprintf(&b, "%s=%d/%s ", table, n, sum)
	}
	var seq, rels, los, locks string
	if err := f.admin.QueryRow(ctx, "SELECT last_value::text || is_called::text FROM "+f.schema+".items_id_seq").Scan(&seq); err != nil {
		t.Fatalf("state: %v", err)
	}
	if err := f.admin.QueryRow(ctx, `SELECT string_agg(relname || ':' || relkind::text, ',' ORDER BY relname) || (SELECT string_agg(proname, ',' ORDER BY proname) FROM pg_proc p WHERE p.pronamespace = n.oid)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 GROUP BY n.oid`, f.schema).Scan(&rels); err != nil {
		t.Fatalf("state: %v", err)
	}
	if err := f.admin.QueryRow(ctx, "SELECT count(*)::text FROM pg_largeobject_metadata").Scan(&los); err != nil {
		t.Fatalf("state: %v", err)
	}
	if err := f.admin.QueryRow(ctx, "SELECT count(*)::text FROM pg_locks WHERE locktype = 'advisory'").Scan(&locks); err != nil {
		t.Fatalf("state: %v", err)
	}
	fmt.Fprintf(&b, "seq=%s relations=%s large_objects=%s advisory_locks=%s", seq, rels, los, locks)
	return b.String()
}

func (f agentFixture) config(c *postgres.Connector) sqlagent.Config {
	return sqlagent.Config{Prefix: "db", Connector: "main", DB: c, Dialect: sqltemplate.Postgres, Include: []string{f.schema + ".*"}, Explain: true}
}

// TestAgentWritesRefused: every form of write an agent could try through
// <prefix>_query is refused, and the database is unchanged after each,
// on a connector that is not read_only (the agent's statement runs
// read-only whatever the connector says).
func TestAgentWritesRefused(t *testing.T) {
	f := newAgentFixture(t)
	c := open(t, postgres.Config{MaxConns: 1})
	e := conntest.AgentEngine(t, f.config(c))
	s := f.schema
	conntest.Refused(t, e, "db_query", []string{
		// DML and DDL.
		"INSERT INTO " + s + ".items (name) VALUES ('x')",
		"UPDATE " + s + ".items SET price = 0",
		"DELETE FROM " + s + ".orders",
		"MERGE INTO " + s + ".items i USING (SELECT 1 AS id) v ON i.id = v.id WHEN MATCHED THEN DELETE",
		"TRUNCATE " + s + ".orders",
		"CREATE TABLE " + s + ".x (a int)",
		"DROP TABLE " + s + ".secrets",
		"ALTER TABLE " + s + ".items ADD COLUMN z int",
		"CREATE INDEX ON " + s + ".items (name)",
		"GRANT ALL ON " + s + ".items TO PUBLIC",
		"COMMENT ON TABLE " + s + ".items IS 'x'",
		// CTEs with DML, SELECT ... INTO, COPY, locking reads.
		"WITH d AS (DELETE FROM " + s + ".orders RETURNING *) SELECT count(*) FROM d",
		"WITH x AS (SELECT 1) INSERT INTO " + s + ".items (name) SELECT 'x' FROM x",
		"(WITH d AS (UPDATE " + s + ".items SET price = 1 RETURNING 1) SELECT * FROM d)",
		"SELECT * INTO " + s + ".copy FROM " + s + ".items",
		"COPY " + s + ".items TO STDOUT",
		"COPY (SELECT 1) TO '/tmp/edgemcp-agent-copy'",
		"SELECT * FROM " + s + ".items FOR UPDATE",
		"EXPLAIN ANALYZE DELETE FROM " + s + ".orders",
		// Functions a READ ONLY transaction lets through.
		"SELECT lo_from_bytea(0, 'x')",
		"SELECT lo_import('/etc/hostname')",
		"SELECT set_config('work_mem', '64kB', false)",
		"SELECT pg_advisory_lock(1)",
		"SELECT pg_try_advisory_xact_lock(1)",
		"SELECT pg_notify('c', 'x')",
		"SELECT nextval('" + s + ".items_id_seq')",
		"SELECT setval('" + s + ".items_id_seq', 1000)",
		"SELECT txid_current()",
		"SELECT pg_sleep(0)",
		// Functions with side effects of the database's own.
		"SELECT " + s + ".bump()",
		"SELECT * FROM " + s + ".bump()",
		// Quoted and schema-qualified names.
		`SELECT "pg_catalog"."set_config"('work_mem', '64kB', false)`,
		"SELECT pg_catalog.pg_advisory_lock(1)",
		`SELECT "lo_from_bytea"(0, 'x')`,
		`SELECT PG_CATALOG.LO_FROM_BYTEA(0, 'x')`,
		`SELECT U&"pg\005fadvisory\005flock"(1)`,
		`SELECT U&"lo!005ffrom!005fbytea" UESCAPE '!' (0, 'x')`,
		"SELECT 1 OPERATOR(" + s + ".+) 1",
		// Comments and dollar quoting around a write.
		"/* SELECT */ DELETE FROM " + s + ".orders",
		"DELETE/**/FROM " + s + ".orders",
		"-- SELECT\nDELETE FROM " + s + ".orders",
		"SELECT pg_advisory_lock /* a comment */ (1)",
		"SELECT pg_advisory_lock\n-- a comment\n(1)",
		"DO $$ BEGIN DELETE FROM " + s + ".orders; END $$",
		"SELECT $$x$$; DELETE FROM " + s + ".orders",
		"SELECT $a$ $$ $a$; DELETE FROM " + s + ".orders",
		"SELECT 'it''s'; DELETE FROM " + s + ".orders",
		"SELECT E'\\''; DELETE FROM " + s + ".orders",
		// More than one statement, and what the lexer cannot read.
		"SELECT 1; DELETE FROM " + s + ".orders",
		"SELECT 1;;DELETE FROM " + s + ".orders",
		"SELECT 'unterminated",
		"SELECT $x$ unterminated",
		"SELECT {{ inputs.id }}",
		// Session and transaction control.
		"SET ROLE postgres",
		"RESET ALL",
		"BEGIN",
		"COMMIT",
		"LISTEN c",
		"NOTIFY c",
		"PREPARE p AS SELECT 1",
		"DECLARE c CURSOR WITH HOLD FOR SELECT 1",
		"VACUUM " + s + ".items",
		"CALL " + s + ".nothing()",
		"LOCK TABLE " + s + ".items",
	}, func() string { return f.state(t) })

	// The connection the attempts ran on kept nothing of them.
	rows := query(t, c, "SELECT current_setting('work_mem'), (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid())")
	if got := fmt.Sprint(rows.Values[0]...); got != "4MB0" {
		t.Errorf("session after the attempts: work_mem and advisory locks %s, want 4MB0", got)
	}
}

// TestAgentDatabaseRefusesWithoutGuard: the database, not the lexer, is
// the guard. Statements sent to AgentQuery directly, past the guard that
// would refuse them, are refused by the server (READ ONLY, a cursor takes
// one query) or undone by the transaction's ROLLBACK and the session
// reset: the database and the pooled session are unchanged.
func TestAgentDatabaseRefusesWithoutGuard(t *testing.T) {
	f := newAgentFixture(t)
	c := open(t, postgres.Config{MaxConns: 1})
	s := f.schema
	conntest.RefusedByDatabase(t, c, []conntest.Direct{
		{SQL: "INSERT INTO " + s + ".items (name) VALUES ('x') RETURNING id", Refused: true},
		{SQL: "DELETE FROM " + s + ".orders RETURNING id", Refused: true},
		{SQL: "CREATE TABLE " + s + ".x AS SELECT 1", Refused: true},
		{SQL: "WITH d AS (DELETE FROM " + s + ".orders RETURNING *) SELECT count(*) FROM d", Refused: true},
		{SQL: "SELECT * INTO " + s + ".copy FROM " + s + ".items", Refused: true},
		{SQL: "SELECT 1; DELETE FROM " + s + ".orders", Refused: true},
		{SQL: "SELECT nextval('" + s + ".items_id_seq')", Refused: true},
		{SQL: "SELECT " + s + ".bump()", Refused: true},
		{SQL: "SELECT * FROM " + s + ".items FOR UPDATE", Refused: true},
		{SQL: "COPY " + s + ".items TO STDOUT", Refused: true},
		{SQL: "SELECT lo_from_bytea(0, 'x')", Refused: false},
		{SQL: "SELECT " + s + ".stash()", Refused: false},
		{SQL: "SELECT set_config('work_mem', '64kB', false)", Refused: false},
		{SQL: "SELECT " + s + ".tune()", Refused: false},
		{SQL: "SELECT pg_advisory_lock(4242)", Refused: false},
		{SQL: "SELECT " + s + ".hold()", Refused: false},
		{SQL: "SELECT pg_notify('c', 'x')", Refused: false},
	}, func() string { return f.state(t) }, func() string {
		rows := query(t, c, "SELECT current_setting('work_mem'), (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid())")
		if got := fmt.Sprint(rows.Values[0]...); got != "4MB0" {
			return "the session kept work_mem and advisory locks " + got + ", want 4MB0"
		}
		return ""
	})
}

// TestAgentQueryAnswer: rows come as arrays under their columns (both
// "id"s of a join stay), values bound as $n whatever their JSON type, and
// an answer cut at max_rows or max_result_size says so.
func TestAgentQueryAnswer(t *testing.T) {
	f := newAgentFixture(t)
	c := open(t, postgres.Config{ReadOnly: true})
	cfg := f.config(c)
	cfg.MaxRows = 3
	cfg.MaxResultSize = 200
	e := conntest.AgentEngine(t, cfg)
	ctx := context.Background()
	s := f.schema

	got := conntest.MustCall(ctx, t, e, "db_query", conntest.JSONArgs(t, map[string]any{
		"sql":    "SELECT i.id, o.id, i.name, i.price FROM " + s + ".items i JOIN " + s + ".orders o ON o.item_id = i.id WHERE i.id = $1 AND i.price > $2 AND i.name = ANY($3) ORDER BY o.id LIMIT 2",
		"params": []any{2, 1.5, []any{"item 2", "nope"}},
	}))
	if want := `{"columns":["id","id","name","price"],"rows":[[2,1,"item 2",2.00],[2,11,"item 2",2.00]],"row_count":2,"truncated":false}`; got != want {
		t.Errorf("join:\n got %s\nwant %s", got, want)
	}
	got = conntest.MustCall(ctx, t, e, "db_query", `{"sql":"SELECT id FROM `+s+`.orders ORDER BY id"}`)
	if want := `{"columns":["id"],"rows":[[1],[2],[3]],"row_count":3,"truncated":true,"reason":"max_rows 3"}`; got != want {
		t.Errorf("max_rows:\n got %s\nwant %s", got, want)
	}
	got = conntest.MustCall(ctx, t, e, "db_query", `{"sql":"SELECT repeat('x', 150) FROM `+s+`.orders ORDER BY id"}`)
	if want := `"row_count":1,"truncated":true,"reason":"max_result_size 200 bytes"}`; !strings.HasSuffix(got, want) {
		t.Errorf("max_result_size:\n got %s\nwant ...%s", got, want)
	}
	if _, perr := conntest.CallTool(ctx, t, e, "db_query", `{"sql":"SELECT $1::int","params":["seven"]}`); perr == nil || !strings.Contains(perr.Message, "invalid input syntax") {
		t.Errorf("a bad value: %v, want the database's error", perr)
	}
}

// TestAgentCatalog: list_tables shows what include and exclude let
// through, with estimates and comments; describe_table gives columns,
// keys, indexes and foreign keys; a hidden table is described as
// missing and a query naming it is refused.
func TestAgentCatalog(t *testing.T) {
	f := newAgentFixture(t)
	c := open(t, postgres.Config{})
	cfg := f.config(c)
	cfg.Exclude = []string{"secrets"}
	e := conntest.AgentEngine(t, cfg)
	ctx := context.Background()
	s := f.schema

	got := conntest.MustCall(ctx, t, e, "db_list_tables", `{}`)
	want := `{"tables":[{"schema":"` + s + `","name":"items","type":"table","rows_estimate":10,"comment":"Things we sell"},{"schema":"` + s + `","name":"orders","type":"table","rows_estimate":30}]}`
	if got != want {
		t.Errorf("list_tables:\n got %s\nwant %s", got, want)
	}
	got = conntest.MustCall(ctx, t, e, "db_describe_table", `{"table":"orders"}`)
	want = `{"schema":"` + s + `","name":"orders","type":"table","rows_estimate":30,"columns":[{"name":"id","type":"integer","nullable":false},{"name":"item_id","type":"integer","nullable":false},{"name":"qty","type":"integer","nullable":false}],"primary_key":["id"],"indexes":[{"name":"orders_item","columns":["item_id","qty"],"definition":"CREATE INDEX orders_item ON ` + s + `.orders USING btree (item_id, qty)"},{"name":"orders_pkey","columns":["id"],"unique":true,"definition":"CREATE UNIQUE INDEX orders_pkey ON ` + s + `.orders USING btree (id)"}],"foreign_keys":[{"name":"orders_item_id_fkey","columns":["item_id"],"references_schema":"` + s + `","references_table":"items","references_columns":["id"]}]}`
	if got != want {
		t.Errorf("describe_table:\n got %s\nwant %s", got, want)
	}
	got = conntest.MustCall(ctx, t, e, "db_describe_table", `{"table":"`+s+`.items"}`)
	if !strings.Contains(got, `{"name":"price","type":"numeric(8,2)","nullable":true,"default":"0","comment":"In euros"}`) {
		t.Errorf("describe_table items: %s", got)
	}
	for _, args := range []string{`{"table":"secrets"}`, `{"table":"nothing"}`} {
		if _, perr := conntest.CallTool(ctx, t, e, "db_describe_table", args); perr == nil || !strings.Contains(perr.Message, "no table or view") {
			t.Errorf("describe %s: %v, want not found", args, perr)
		}
	}
	for _, sql := range []string{"SELECT * FROM " + s + ".secrets", `SELECT * FROM "SECRETS"`, "SELECT ssn FROM secrets"} {
		if _, perr := conntest.CallTool(ctx, t, e, "db_query", conntest.JSONArgs(t, map[string]any{"sql": sql})); perr == nil || perr.Stage != sqlagent.StageGuard {
			t.Errorf("%q: %v, want the guard's refusal", sql, perr)
		}
	}
	got = conntest.MustCall(ctx, t, e, "db_explain", `{"sql":"SELECT * FROM `+s+`.orders WHERE id = $1","params":[3]}`)
	var plan struct {
		Plan     []map[string]any
		Estimate struct{ Cost, Rows float64 }
	}
	if err := json.Unmarshal([]byte(got), &plan); err != nil || len(plan.Plan) != 1 || plan.Estimate.Rows != 1 {
		t.Errorf("explain: %s (%v)", got, err)
	}
}
