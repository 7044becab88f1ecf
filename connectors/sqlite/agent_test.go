package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/connectors/sqlite"
	"github.com/edgemcp/edgemcp/pipeline/sqlagent"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// newAgentDB creates the database an agent explores: items (a comment
// in its DDL is all SQLite keeps), orders (a foreign key, an index),
// secrets (to hide), a view, and the statistics of ANALYZE.
func newAgentDB(t *testing.T) string {
	t.Helper()
	return newDB(t,
		"CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL DEFAULT 0)",
		"CREATE TABLE orders (id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL REFERENCES items(id), qty INTEGER NOT NULL)",
		"CREATE INDEX orders_item ON orders (item_id, qty)",
		"CREATE TABLE secrets (id INTEGER PRIMARY KEY, ssn TEXT)",
		"CREATE VIEW cheap AS SELECT id, name FROM items WHERE price < 5",
		"WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 10) INSERT INTO items (name, price) SELECT 'item ' || n, n FROM g",
		"WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 30) INSERT INTO orders SELECT n, 1 + n % 10, n FROM g",
		"INSERT INTO secrets VALUES (1, '123-45-6789')",
		"ANALYZE",
	)
}

// agentState sums up what a write could change: the file's tables (rows
// and their text), its schema, its header's user_version, and the files
// of its directory (an ATTACH or VACUUM INTO would make one).
func agentState(t *testing.T, path string) string {
	t.Helper()
	c := open(t, sqlite.Config{Path: path, ReadOnly: true})
	defer c.Close()
	var b strings.Builder
	for _, table := range []struct{ name, cols string }{{"items", "id, name, price"}, {"orders", "id, item_id, qty"}, {"secrets", "id, ssn"}} {
		rows := query(t, c, "SELECT count(*), group_concat(x, '|') FROM (SELECT json_array("+table.cols+") AS x FROM "+table.name+" ORDER BY id)")
		fmt.Fprintf(&b, "%s=%v ", table.name, rows.Values[0])
	}
	fmt.Fprintf(&b, "schema=%v user_version=%v ", query(t, c, "SELECT group_concat(type || ':' || name || ':' || coalesce(sql, ''), ';') FROM (SELECT * FROM sqlite_schema ORDER BY name)").Values[0], scalar(t, c, "PRAGMA user_version"))
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	fmt.Fprintf(&b, "files=%v", names)
	return b.String()
}

func agentConfig(c *sqlite.Connector) sqlagent.Config {
	return sqlagent.Config{Prefix: "db", DB: c, Dialect: sqltemplate.SQLite, Explain: true}
}

// TestAgentWritesRefused: every form of write through <prefix>_query is
// refused and the file unchanged, on a connector that is not read_only.
func TestAgentWritesRefused(t *testing.T) {
	path := newAgentDB(t)
	c := open(t, sqlite.Config{Path: path})
	e := conntest.AgentEngine(t, agentConfig(c))
	other := filepath.Join(filepath.Dir(path), "other.db")
	conntest.Refused(t, e, "db_query", []string{
		"INSERT INTO items (name) VALUES ('x')",
		"REPLACE INTO items (id, name) VALUES (1, 'x')",
		"INSERT OR IGNORE INTO items (id, name) VALUES (1, 'x')",
		"UPDATE items SET price = 0",
		"DELETE FROM orders",
		"CREATE TABLE x (a)",
		"CREATE TEMP TABLE x (a)",
		"DROP TABLE secrets",
		"ALTER TABLE items ADD COLUMN z",
		"CREATE INDEX x ON items (name)",
		"CREATE TRIGGER x AFTER INSERT ON items BEGIN DELETE FROM orders; END",
		"WITH x AS (SELECT 1) INSERT INTO items (name) SELECT 'x' FROM x",
		"WITH x AS (SELECT 1) DELETE FROM orders",
		"INSERT INTO items (name) VALUES ('x') RETURNING id",
		"ATTACH DATABASE '" + other + "' AS other",
		"DETACH DATABASE main",
		"PRAGMA query_only = 0",
		"PRAGMA user_version = 5",
		"PRAGMA journal_mode = DELETE",
		"SELECT * FROM pragma_user_version",
		"VACUUM",
		"VACUUM INTO '" + other + "'",
		"REINDEX",
		"ANALYZE",
		"BEGIN",
		"SAVEPOINT a",
		"SELECT load_extension('x')",
		`SELECT "load_extension"('x')`,
		"SELECT load_extension /* a comment */ ('x')",
		"/* SELECT */ DELETE FROM orders",
		"-- SELECT\nDELETE FROM orders",
		"SELECT 1; DELETE FROM orders",
		"SELECT 'a;'; DELETE FROM orders",
		"SELECT 'unterminated",
		"SELECT :name",
		"SELECT @name",
	}, func() string { return agentState(t, path) })
}

// TestAgentDatabaseRefusesWithoutGuard: past the guard, SQLite is the
// guard: the agent pool's authorizer refuses to compile anything but
// reads, and its connection is read-only.
func TestAgentDatabaseRefusesWithoutGuard(t *testing.T) {
	path := newAgentDB(t)
	c := open(t, sqlite.Config{Path: path})
	other := filepath.Join(filepath.Dir(path), "other.db")
	conntest.RefusedByDatabase(t, c, []conntest.Direct{
		{SQL: "INSERT INTO items (name) VALUES ('x')", Refused: true},
		{SQL: "DELETE FROM orders RETURNING id", Refused: true},
		{SQL: "CREATE TEMP TABLE x (a)", Refused: true},
		{SQL: "ATTACH DATABASE '" + other + "' AS other", Refused: true},
		{SQL: "PRAGMA query_only = 0", Refused: true},
		{SQL: "PRAGMA user_version = 5", Refused: true},
		{SQL: "VACUUM INTO '" + other + "'", Refused: true},
		{SQL: "BEGIN IMMEDIATE", Refused: true},
		{SQL: "SELECT load_extension('x')", Refused: true},
		{SQL: "SELECT 1; DELETE FROM orders", Refused: true},
	}, func() string { return agentState(t, path) }, nil)
}

// TestAgentQueryAndCatalog: answers, limits, the catalog with its filter,
// the plan; an in-memory database cannot serve agents.
func TestAgentQueryAndCatalog(t *testing.T) {
	path := newAgentDB(t)
	c := open(t, sqlite.Config{Path: path})
	cfg := agentConfig(c)
	cfg.MaxRows, cfg.MaxResultSize = 3, 200
	cfg.Exclude = []string{"secrets"}
	e := conntest.AgentEngine(t, cfg)
	ctx := context.Background()

	got := conntest.MustCall(ctx, t, e, "db_query", `{"sql":"SELECT i.id, o.id, i.name FROM items i JOIN orders o ON o.item_id = i.id WHERE i.id = ? AND i.price > ? ORDER BY o.id LIMIT 2","params":[2,1.5]}`)
	if want := `{"columns":["id","id","name"],"rows":[[2,1,"item 2"],[2,11,"item 2"]],"row_count":2,"truncated":false}`; got != want {
		t.Errorf("join:\n got %s\nwant %s", got, want)
	}
	got = conntest.MustCall(ctx, t, e, "db_query", `{"sql":"SELECT id FROM orders ORDER BY id"}`)
	if want := `{"columns":["id"],"rows":[[1],[2],[3]],"row_count":3,"truncated":true,"reason":"max_rows 3"}`; got != want {
		t.Errorf("max_rows:\n got %s\nwant %s", got, want)
	}
	got = conntest.MustCall(ctx, t, e, "db_list_tables", `{}`)
	if want := `{"tables":[{"schema":"main","name":"cheap","type":"view"},{"schema":"main","name":"items","type":"table","rows_estimate":10},{"schema":"main","name":"orders","type":"table","rows_estimate":30}]}`; got != want {
		t.Errorf("list_tables:\n got %s\nwant %s", got, want)
	}
	got = conntest.MustCall(ctx, t, e, "db_describe_table", `{"table":"orders"}`)
	if want := `{"schema":"main","name":"orders","type":"table","rows_estimate":30,"columns":[{"name":"id","type":"INTEGER","nullable":true},{"name":"item_id","type":"INTEGER","nullable":false},{"name":"qty","type":"INTEGER","nullable":false}],"primary_key":["id"],"indexes":[{"name":"orders_item","columns":["item_id","qty"]}],"foreign_keys":[{"name":"fk_0","columns":["item_id"],"references_schema":"main","references_table":"items","references_columns":["id"]}]}`; got != want {
		t.Errorf("describe_table:\n got %s\nwant %s", got, want)
	}
	if _, perr := conntest.CallTool(ctx, t, e, "db_query", `{"sql":"SELECT * FROM [secrets]"}`); perr == nil || perr.Stage != sqlagent.StageGuard {
		t.Errorf("a hidden table: %v", perr)
	}
	got = conntest.MustCall(ctx, t, e, "db_explain", `{"sql":"SELECT * FROM orders WHERE id = ?","params":[3]}`)
	if !strings.Contains(got, `"detail":"SEARCH orders USING INTEGER PRIMARY KEY (rowid=?)"`) || strings.Contains(got, "estimate") {
		t.Errorf("explain: %s", got)
	}

	mem := open(t, sqlite.Config{Path: ":memory:"})
	e = conntest.AgentEngine(t, agentConfig(mem))
	if _, perr := conntest.CallTool(ctx, t, e, "db_query", `{"sql":"SELECT 1"}`); perr == nil || !strings.Contains(perr.Message, "needs a database file") {
		t.Errorf("in-memory: %v", perr)
	}
	if _, err := sqlagent.Build(sqlagent.Config{Prefix: "db", DB: c, Dialect: sqltemplate.SQLite, MaxCost: 10}); err == nil || !strings.Contains(err.Error(), "SQLite's EXPLAIN QUERY PLAN") {
		t.Errorf("max_cost on SQLite: %v", err)
	}
}

// TestAgentStatementTimeout: the toolset's statement_timeout interrupts
// a long statement.
func TestAgentStatementTimeout(t *testing.T) {
	c := open(t, sqlite.Config{Path: newAgentDB(t)})
	cfg := agentConfig(c)
	cfg.StatementTimeout = 50 * time.Millisecond
	e := conntest.AgentEngine(t, cfg)
	_, perr := conntest.CallTool(context.Background(), t, e, "db_query", `{"sql":"WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g) SELECT count(*) FROM g"}`)
	if perr == nil || !strings.Contains(perr.Message, "statement timed out") {
		t.Fatalf("a long statement: %v, want statement timed out", perr)
	}
}
