package mysql

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline/sqlagent"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// agentFixture: tables an agent explores (items with an AUTO_INCREMENT
// key and a comment, orders with a foreign key and an index, secrets to
// hide), a sequence and a function that writes, all named p_...
type agentFixture struct{ p string }

func newAgentFixture(t *testing.T) agentFixture {
	t.Helper()
	p := testservices.Name("agent")
	f := agentFixture{p: p}
	t.Cleanup(func() {
		for _, q := range []string{"DROP TABLE IF EXISTS " + p + "_orders", "DROP TABLE IF EXISTS " + p + "_items", "DROP TABLE IF EXISTS " + p + "_secrets",
			"DROP SEQUENCE IF EXISTS " + p + "_seq", "DROP FUNCTION IF EXISTS " + p + "_bump", "DROP TABLE IF EXISTS " + p + "_copy"} {
			testservices.MySQLExec(t, q)
		}
	})
	for _, q := range []string{
		"CREATE TABLE " + p + "_items (id int AUTO_INCREMENT PRIMARY KEY, name varchar(40) NOT NULL, price decimal(8,2) DEFAULT 0 COMMENT 'In euros') COMMENT 'Things we sell'",
		"CREATE TABLE " + p + "_orders (id int PRIMARY KEY, item_id int NOT NULL, qty int NOT NULL, KEY " + p + "_item (item_id, qty), CONSTRAINT " + p + "_fk FOREIGN KEY (item_id) REFERENCES " + p + "_items (id))",
		"CREATE TABLE " + p + "_secrets (id int PRIMARY KEY, ssn text)",
		"CREATE SEQUENCE " + p + "_seq",
		"INSERT INTO " + p + "_items (name, price) SELECT concat('item ', seq), seq FROM seq_1_to_10",
		"INSERT INTO " + p + "_orders SELECT seq, 1 + seq % 10, seq FROM seq_1_to_30",
		"INSERT INTO " + p + "_secrets VALUES (1, '123-45-6789')",
		"CREATE FUNCTION " + p + "_bump() RETURNS int MODIFIES SQL DATA BEGIN INSERT INTO " + p + "_items (name) VALUES ('bumped'); RETURN 1; END",
		"ANALYZE TABLE " + p + "_items, " + p + "_orders",
	} {
		testservices.MySQLExec(t, q)
	}
	return f
}

// state sums up what a write could change: each table's rows (count and
// CHECKSUM TABLE), the AUTO_INCREMENT counter, the sequence, the tables
// and routines named p_..., and the named lock the attempts take.
func (f agentFixture) state(t *testing.T) string {
	t.Helper()
	db := testservices.MySQLDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var b strings.Builder
	for _, table := range []string{"items", "orders", "secrets"} {
		var n int64
		var name string
		var sum any
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+f.p+"_"+table).Scan(&n); err != nil {
			t.Fatalf("state: %v", err)
		}
		if err := db.QueryRowContext(ctx, "CHECKSUM TABLE "+f.p+"_"+table).Scan(&name, &sum); err != nil {
			t.Fatalf("state: %v", err)
		}
		fmt.Fprintf(&b, "%s=%d/%s ", table, n, sum)
	}
	var auto, seq, objects, lock any
	for _, q := range []struct {
		sql string
		v   *any
	}{
		{"SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '" + f.p + "_items'", &auto},
		{"SELECT next_not_cached_value FROM " + f.p + "_seq", &seq},
		{"SELECT group_concat(n ORDER BY n) FROM (SELECT TABLE_NAME n FROM information_schema.TABLES WHERE TABLE_NAME LIKE '" + f.p + "%' UNION ALL SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_NAME LIKE '" + f.p + "%') o", &objects},
		{"SELECT IS_USED_LOCK('edgemcp_agent_lock') IS NOT NULL", &lock},
	} {
		if err := db.QueryRowContext(ctx, q.sql).Scan(q.v); err != nil {
			t.Fatalf("state %s: %v", q.sql, err)
		}
	}
	fmt.Fprintf(&b, "auto_increment=%s seq=%s objects=%s lock=%s", auto, seq, objects, lock)
	return b.String()
}

func (f agentFixture) config(c *Connector) sqlagent.Config {
	return sqlagent.Config{Prefix: "db", DB: c, Dialect: sqltemplate.MySQL, Include: []string{f.p + "_*"}, Explain: true}
}

// TestAgentWritesRefused: every form of write an agent could try through
// <prefix>_query is refused, and the database is unchanged after each,
// on a connector that is not read_only.
func TestAgentWritesRefused(t *testing.T) {
	f := newAgentFixture(t)
	c := open(t, Config{MaxConns: 1})
	e := conntest.AgentEngine(t, f.config(c))
	p := f.p
	conntest.Refused(t, e, "db_query", []string{
		// DML and DDL.
		"INSERT INTO " + p + "_items (name) VALUES ('x')",
		"REPLACE INTO " + p + "_items (id, name) VALUES (1, 'x')",
		"UPDATE " + p + "_items SET price = 0",
		"DELETE FROM " + p + "_orders",
		"TRUNCATE " + p + "_orders",
		"CREATE TABLE " + p + "_x (a int)",
		"DROP TABLE " + p + "_secrets",
		"ALTER TABLE " + p + "_items ADD COLUMN z int",
		"RENAME TABLE " + p + "_secrets TO " + p + "_x",
		"GRANT SELECT ON " + p + "_items TO root",
		// CTEs with DML, SELECT ... INTO, locking reads.
		"WITH x AS (SELECT 1) DELETE FROM " + p + "_orders",
		"WITH d AS (SELECT id FROM " + p + "_orders) UPDATE " + p + "_items SET price = 1",
		"SELECT * INTO @v FROM " + p + "_items LIMIT 1",
		"SELECT * FROM " + p + "_items INTO OUTFILE '/tmp/edgemcp-agent-outfile'",
		"SELECT name FROM " + p + "_items LIMIT 1 INTO DUMPFILE '/tmp/edgemcp-agent-dumpfile'",
		"SELECT * FROM " + p + "_items FOR UPDATE",
		"SELECT * FROM " + p + "_items LOCK IN SHARE MODE",
		"SELECT @v := 1",
		// Functions: named locks, sleep, files, sequences, side effects.
		"SELECT GET_LOCK('edgemcp_agent_lock', 0)",
		"SELECT `get_lock`('edgemcp_agent_lock', 0)",
		"SELECT get_lock /* a comment */ ('edgemcp_agent_lock', 0)",
		"SELECT SLEEP(0)",
		"SELECT BENCHMARK(10, 1)",
		"SELECT LOAD_FILE('/etc/hostname')",
		"SELECT NEXTVAL(" + p + "_seq)",
		"SELECT NEXT VALUE FOR " + p + "_seq",
		"SELECT SETVAL(" + p + "_seq, 100)",
		"SELECT " + p + "_bump()",
		"SELECT test." + p + "_bump()",
		"SELECT `" + p + "_bump`()",
		// Comments around a write, executable comments.
		"/* SELECT */ DELETE FROM " + p + "_orders",
		"DELETE/**/FROM " + p + "_orders",
		"# SELECT\nDELETE FROM " + p + "_orders",
		"-- SELECT\nDELETE FROM " + p + "_orders",
		"SELECT 1 /*! ; DELETE FROM " + p + "_orders */",
		"SELECT 1 /*!50000 , GET_LOCK('edgemcp_agent_lock', 0) */",
		"SELECT '\\''; DELETE FROM " + p + "_orders",
		// More than one statement; what the lexer cannot read.
		"SELECT 1; DELETE FROM " + p + "_orders",
		"SELECT 'unterminated",
		// Session and transaction control.
		"SET @a = 1",
		"SET SESSION sql_mode = ''",
		"START TRANSACTION",
		"COMMIT",
		"LOCK TABLES " + p + "_items READ",
		"HANDLER " + p + "_items OPEN",
		"DO GET_LOCK('edgemcp_agent_lock', 0)",
		"CALL nothing()",
		"PREPARE s FROM 'DELETE FROM " + p + "_orders'",
		"LOAD DATA INFILE '/etc/hostname' INTO TABLE " + p + "_secrets",
		"XA START 'x'",
	}, func() string { return f.state(t) })
}

// TestAgentDatabaseRefusesWithoutGuard: past the guard, the server is
// the guard: writes in a READ ONLY transaction fail (a stored function's
// too), a prepared statement holds one statement, and a statement that
// leaves state in its session (a named lock) has its connection closed.
func TestAgentDatabaseRefusesWithoutGuard(t *testing.T) {
	f := newAgentFixture(t)
	c := open(t, Config{MaxConns: 1})
	p := f.p
	conntest.RefusedByDatabase(t, c, []conntest.Direct{
		{SQL: "INSERT INTO " + p + "_items (name) VALUES (?)", Args: []any{"x"}, Refused: true},
		{SQL: "DELETE FROM " + p + "_orders WHERE id > ?", Args: []any{int64(0)}, Refused: true},
		{SQL: "SELECT " + p + "_bump()", Refused: true},
		{SQL: "SELECT NEXTVAL(" + p + "_seq)", Refused: true},
		{SQL: "SELECT ?; DELETE FROM " + p + "_orders", Args: []any{int64(1)}, Refused: true},
		{SQL: "SELECT 1; DELETE FROM " + p + "_orders", Refused: true},
		{SQL: "SELECT GET_LOCK('edgemcp_agent_lock', 0)", Refused: false},
	}, func() string { return f.state(t) }, nil)
}

// TestAgentQueryAnswer: rows under their columns, values bound as ?, an
// answer cut at max_rows or max_result_size says so.
func TestAgentQueryAnswer(t *testing.T) {
	f := newAgentFixture(t)
	c := open(t, Config{ReadOnly: true})
	cfg := f.config(c)
	cfg.MaxRows, cfg.MaxResultSize = 3, 200
	e := conntest.AgentEngine(t, cfg)
	ctx := context.Background()
	p := f.p
	got := conntest.MustCall(ctx, t, e, "db_query", conntest.JSONArgs(t, map[string]any{
		"sql":    "SELECT i.id, o.id, i.name, i.price FROM " + p + "_items i JOIN " + p + "_orders o ON o.item_id = i.id WHERE i.id = ? AND i.price > ? ORDER BY o.id LIMIT 2",
		"params": []any{2, 1.5},
	}))
	if want := `{"columns":["id","id","name","price"],"rows":[[2,1,"item 2",2.00],[2,11,"item 2",2.00]],"row_count":2,"truncated":false}`; got != want {
		t.Errorf("join:\n got %s\nwant %s", got, want)
	}
	got = conntest.MustCall(ctx, t, e, "db_query", `{"sql":"SELECT id FROM `+p+`_orders ORDER BY id"}`)
	if want := `{"columns":["id"],"rows":[[1],[2],[3]],"row_count":3,"truncated":true,"reason":"max_rows 3"}`; got != want {
		t.Errorf("max_rows:\n got %s\nwant %s", got, want)
	}
	got = conntest.MustCall(ctx, t, e, "db_query", `{"sql":"SELECT repeat('x', 150) FROM `+p+`_orders ORDER BY id"}`)
	if want := `"row_count":1,"truncated":true,"reason":"max_result_size 200 bytes"}`; !strings.HasSuffix(got, want) {
		t.Errorf("max_result_size:\n got %s\nwant ...%s", got, want)
	}
}

// TestAgentCatalog: list_tables and describe_table from
// information_schema, filtered; a hidden table is missing and a query
// naming it is refused.
func TestAgentCatalog(t *testing.T) {
	f := newAgentFixture(t)
	c := open(t, Config{})
	cfg := f.config(c)
	cfg.Exclude = []string{"*_secrets"}
	e := conntest.AgentEngine(t, cfg)
	ctx := context.Background()
	p := f.p
	got := conntest.MustCall(ctx, t, e, "db_list_tables", `{"schema":"test"}`)
	want := `{"tables":[{"schema":"test","name":"` + p + `_items","type":"table","rows_estimate":10,"comment":"Things we sell"},{"schema":"test","name":"` + p + `_orders","type":"table","rows_estimate":30},{"schema":"test","name":"` + p + `_seq","type":"sequence"}]}`
	if got != want {
		t.Errorf("list_tables:\n got %s\nwant %s", got, want)
	}
	got = conntest.MustCall(ctx, t, e, "db_describe_table", `{"table":"`+p+`_orders"}`)
	want = `{"schema":"test","name":"` + p + `_orders","type":"table","rows_estimate":30,"columns":[{"name":"id","type":"int(11)","nullable":false},{"name":"item_id","type":"int(11)","nullable":false},{"name":"qty","type":"int(11)","nullable":false}],"primary_key":["id"],"indexes":[{"name":"` + p + `_item","columns":["item_id","qty"]},{"name":"PRIMARY","columns":["id"],"unique":true}],"foreign_keys":[{"name":"` + p + `_fk","columns":["item_id"],"references_schema":"test","references_table":"` + p + `_items","references_columns":["id"]}]}`
	if got != want {
		t.Errorf("describe_table:\n got %s\nwant %s", got, want)
	}
	if got := conntest.MustCall(ctx, t, e, "db_describe_table", `{"table":"test.`+p+`_items"}`); !strings.Contains(got, `{"name":"price","type":"decimal(8,2)","nullable":true,"default":"0.00","comment":"In euros"}`) {
		t.Errorf("describe_table items: %s", got)
	}
	if _, perr := conntest.CallTool(ctx, t, e, "db_describe_table", `{"table":"`+p+`_secrets"}`); perr == nil || !strings.Contains(perr.Message, "no table or view") {
		t.Errorf("describe a hidden table: %v", perr)
	}
	if _, perr := conntest.CallTool(ctx, t, e, "db_query", `{"sql":"SELECT * FROM `+"`"+p+`_SECRETS`+"`"+`"}`); perr == nil || perr.Stage != sqlagent.StageGuard {
		t.Errorf("query a hidden table: %v", perr)
	}
	got = conntest.MustCall(ctx, t, e, "db_explain", `{"sql":"SELECT * FROM `+p+`_orders WHERE id = ?","params":[3]}`)
	if !strings.Contains(got, `"query_block"`) || !strings.Contains(got, `"estimate":{"rows":1}`) {
		t.Errorf("explain: %s", got)
	}
}

// TestAgentCostGuard: max_rows_estimate refuses a cross join of two
// large tables with the estimate and the limit in the message, and
// admits an indexed lookup. (MariaDB 10's EXPLAIN has rows, no cost.)
func TestAgentCostGuard(t *testing.T) {
	p := testservices.Name("agentbig")
	for _, table := range []string{"a", "b"} {
		name := p + "_" + table
		t.Cleanup(func() { testservices.MySQLExec(t, "DROP TABLE IF EXISTS "+name) })
		testservices.MySQLExec(t, "CREATE TABLE "+name+" (id int PRIMARY KEY, v varchar(20) NOT NULL)")
		testservices.MySQLExec(t, "INSERT INTO "+name+" SELECT seq, concat('value ', seq) FROM seq_1_to_20000")
		testservices.MySQLExec(t, "ANALYZE TABLE "+name)
	}
	c := open(t, Config{MaxConns: 1})
	e := conntest.AgentEngine(t, sqlagent.Config{Prefix: "db", DB: c, Dialect: sqltemplate.MySQL, MaxRowsEstimate: 100000})
	ctx := context.Background()
	_, perr := conntest.CallTool(ctx, t, e, "db_query", `{"sql":"SELECT count(*) FROM `+p+`_a a, `+p+`_b b WHERE a.v < b.v"}`)
	if perr == nil || perr.Stage != sqlagent.StageCost || !strings.Contains(perr.Message, "over max_rows_estimate 100000") || !strings.Contains(perr.Message, "the planner estimates ") {
		t.Fatalf("cross join: %v, want the cost guard's refusal", perr)
	}
	t.Log(perr)
	if got := conntest.MustCall(ctx, t, e, "db_query", `{"sql":"SELECT v FROM `+p+`_a WHERE id = ?","params":[42]}`); got != `{"columns":["v"],"rows":[["value 42"]],"row_count":1,"truncated":false}` {
		t.Errorf("indexed lookup: %s", got)
	}
	if isMariaDB(t, c) {
		e := conntest.AgentEngine(t, sqlagent.Config{Prefix: "db", DB: c, Dialect: sqltemplate.MySQL, MaxCost: 1000})
		if _, perr := conntest.CallTool(ctx, t, e, "db_query", `{"sql":"SELECT 1"}`); perr == nil || !strings.Contains(perr.Message, "max_cost cannot be checked") {
			t.Errorf("max_cost on MariaDB 10: %v, want a refusal that says why", perr)
		}
	}
}

// TestAgentStatementTimeout: the toolset's statement_timeout ends a long
// statement (the client's deadline, then KILL QUERY).
func TestAgentStatementTimeout(t *testing.T) {
	c := open(t, Config{MaxConns: 1})
	e := conntest.AgentEngine(t, sqlagent.Config{Prefix: "db", DB: c, Dialect: sqltemplate.MySQL, StatementTimeout: 100 * time.Millisecond})
	_, perr := conntest.CallTool(context.Background(), t, e, "db_query", `{"sql":"SELECT count(*) FROM seq_1_to_100000 a, seq_1_to_100000 b WHERE a.seq + b.seq > 0"}`)
	if perr == nil || !strings.Contains(perr.Message, "statement timed out") {
		t.Fatalf("a long statement: %v, want statement timed out", perr)
	}
	if got := conntest.MustCall(context.Background(), t, e, "db_query", `{"sql":"SELECT 1"}`); !strings.Contains(got, "[[1]]") {
		t.Errorf("the next statement: %s", got)
	}
}
