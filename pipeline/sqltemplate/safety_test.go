package sqltemplate

import (
	"strings"
	"testing"
)

// safetyCase is a statement and the refusal it must get ("" when
// accepted; else a substring of the error), from Check and from Compile.
type safetyCase struct {
	d    Dialect
	src  string
	want string
}

func runSafetyCases(t *testing.T, rules Rules, tests []safetyCase) {
	t.Helper()
	for _, tt := range tests {
		for _, how := range []string{"Check", "Compile"} {
			var err error
			if how == "Check" {
				err = Check(tt.src, tt.d, rules)
			} else {
				_, err = Compile(tt.src, Options{Dialect: tt.d, Inputs: map[string]Param{"id": {}}, Safety: rules})
			}
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("%s %s %q: refused: %v", how, tt.d, tt.src, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("%s %s %q: got %v, want %q", how, tt.d, tt.src, err, tt.want)
			}
		}
	}
}

func TestSafetyReadOnly(t *testing.T) {
	runSafetyCases(t, Rules{ReadOnly: true, OneStatement: true}, []safetyCase{
		// Queries pass, whatever words hide in strings and comments.
		{Postgres, "SELECT id FROM t WHERE id = {{ inputs.id }}", ""},
		{Postgres, "select 1", ""},
		{Postgres, "(SELECT 1) UNION (SELECT 2)", ""},
		{Postgres, "WITH a AS (SELECT 1) SELECT * FROM a", ""},
		{Postgres, "WITH a AS MATERIALIZED (SELECT 1), b AS (SELECT 2) SELECT * FROM a, b", ""},
		{Postgres, "VALUES (1), (2)", ""},
		{Postgres, "TABLE t", ""},
		{Postgres, "SHOW search_path", ""},
		{Postgres, "EXPLAIN SELECT 1", ""},
		{Postgres, "EXPLAIN (FORMAT JSON) SELECT 1", ""},
		{MySQL, "DESCRIBE users", ""},
		{Postgres, "SELECT 'INSERT INTO t VALUES (1); DELETE FROM t' AS s", ""},
		{Postgres, "SELECT 1 -- ; DELETE FROM t\n", ""},
		{Postgres, "SELECT 1 /* ) DELETE FROM t FOR UPDATE */", ""},
		{Postgres, `SELECT "into", "update" FROM t`, ""},
		{Postgres, "SELECT $$ FOR UPDATE $$", ""},
		{Postgres, "SELECT substring(a FROM 1 FOR 2) FROM t", ""},
		{MySQL, "SELECT INSERT(name, 1, 2, 'x'), REPLACE(name, 'a', 'b') FROM t", ""},
		{Postgres, "SELECT 1;", ""},
		{Postgres, "SELECT 1 ; ;", ""},

		// Writes and anything else that is not a query.
		{Postgres, "INSERT INTO t VALUES (1)", "INSERT is not a query"},
		{Postgres, "  update t SET a = 1", "UPDATE is not a query"},
		{Postgres, "DELETE FROM t", "DELETE is not a query"},
		{Postgres, "MERGE INTO t USING u ON t.id = u.id WHEN MATCHED THEN DELETE", "MERGE is not a query"},
		{Postgres, "CREATE TABLE x (a int)", "CREATE is not a query"},
		{Postgres, "DROP TABLE t", "DROP is not a query"},
		{Postgres, "TRUNCATE t", "TRUNCATE is not a query"},
		{Postgres, "COPY t TO STDOUT", "COPY is not a query"},
		{Postgres, "CALL p()", "CALL is not a query"},
		{Postgres, "DO $$ BEGIN END $$", "DO is not a query"},
		{Postgres, "SET statement_timeout = 0", "SET is not a query"},
		{Postgres, "LOCK TABLE t", "LOCK is not a query"},
		{SQLite, "PRAGMA user_version = 5", "PRAGMA is not a query"},
		{SQLite, "REPLACE INTO t VALUES (1)", "REPLACE is not a query"},
		{MySQL, "HANDLER t OPEN", "HANDLER is not a query"},
		{Postgres, "(INSERT INTO t VALUES (1))", "INSERT is not a query"},
		{Postgres, "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "DELETE inside the statement writes"},
		{Postgres, "WITH d AS (SELECT 1) INSERT INTO t SELECT * FROM d", "INSERT inside the statement writes"},
		{Postgres, "WITH d AS MATERIALIZED (UPDATE t SET a = 1 RETURNING a) SELECT 1", "UPDATE inside the statement writes"},
		{Postgres, "SELECT * INTO copy FROM t", "SELECT ... INTO writes"},
		{MySQL, "SELECT a INTO @x FROM t", "SELECT ... INTO writes"},
		{MySQL, "SELECT a FROM t INTO OUTFILE '/tmp/x'", "SELECT ... INTO writes"},
		{Postgres, "SELECT * FROM t FOR UPDATE", "FOR UPDATE locks rows"},
		{Postgres, "SELECT * FROM t for share", "FOR SHARE locks rows"},
		{Postgres, "SELECT * FROM t FOR NO KEY UPDATE", "FOR NO KEY UPDATE locks rows"},
		{Postgres, "SELECT * FROM t FOR KEY SHARE SKIP LOCKED", "FOR KEY SHARE locks rows"},
		{MySQL, "SELECT * FROM t LOCK IN SHARE MODE", "LOCK IN SHARE MODE"},
		{Postgres, "EXPLAIN ANALYZE DELETE FROM t", "EXPLAIN DELETE explains a write"},
		{Postgres, "EXPLAIN (ANALYZE, VERBOSE) INSERT INTO t VALUES (1)", "EXPLAIN INSERT explains a write"},
		{Postgres, "SELECT 1; DELETE FROM t", `more than one statement ("DELETE" follows a ";")`},
	})
}

func TestSafetyOneStatement(t *testing.T) {
	one := Rules{OneStatement: true}
	for _, src := range []string{"INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)", "SELECT 1;SELECT 2", "SELECT 1; ; x"} {
		if err := Check(src, SQLite, one); err == nil || !strings.Contains(err.Error(), "more than one statement") {
			t.Errorf("%q: got %v", src, err)
		}
	}
	for _, src := range []string{"INSERT INTO t VALUES (1);", "SELECT ';'", "SELECT 1; -- the end", "SELECT 1 /* ; SELECT 2 */"} {
		if err := Check(src, SQLite, one); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
	// Not a read_only connector: writes are fine.
	if err := Check("DELETE FROM t WHERE id = 1", Postgres, one); err != nil {
		t.Error(err)
	}
}

func TestSafetyBlockFunctions(t *testing.T) {
	runSafetyCases(t, Rules{BlockFunctions: []string{"pg_sleep", "DBLINK", "sleep"}}, []safetyCase{
		{Postgres, "SELECT pg_sleep(1)", "calls pg_sleep()"},
		{Postgres, "SELECT PG_SLEEP (1)", "calls pg_sleep()"},
		{Postgres, "SELECT pg_catalog.pg_sleep(1)", "calls pg_sleep()"},
		{Postgres, `SELECT "pg_catalog"."pg_sleep"(1)`, "calls pg_sleep()"},
		{Postgres, "SELECT pg_catalog . pg_sleep /* x */ (1)", "calls pg_sleep()"},
		{Postgres, `SELECT U&"pg\005fsleep"(1)`, "calls pg_sleep()"},
		{Postgres, `SELECT U&"pg!005fsleep" UESCAPE '!' (1)`, "calls pg_sleep()"},
		{Postgres, `SELECT U&"pg\+00005fsleep"(1)`, "calls pg_sleep()"},
		{Postgres, "SELECT * FROM dblink('dbname=x', 'select 1') AS t(a int)", "calls dblink()"},
		{MySQL, "SELECT SLEEP(1)", "calls sleep()"},
		{MySQL, "SELECT `sleep`(1)", "calls sleep()"},
		{MySQL, `SELECT "sleep"(1)`, "calls sleep()"},
		{MySQL, "SELECT 1 /*!50000 + SLEEP(1) */", "MySQL executable comment"},
		{MySQL, "SELECT 1 /*M! + SLEEP(1) */", "MySQL executable comment"},
		{SQLite, "SELECT [sleep](1)", "calls sleep()"},

		{Postgres, "SELECT 'pg_sleep(1)'", ""},
		{Postgres, "SELECT 1 -- pg_sleep(1)\n", ""},
		{Postgres, "SELECT pg_sleep_for('1s')", ""},
		{Postgres, "SELECT pg_sleep FROM t", ""},
		{Postgres, `SELECT "pg_sleep" FROM t`, ""},
		{MySQL, "SELECT 1 /*+ MAX_EXECUTION_TIME(1000) */", ""},
	})
}

func TestSafetyCompileMapsPositions(t *testing.T) {
	env := func(name string) (string, bool) { return "pg_sleep(1)", name == "HIDDEN" }
	opts := Options{Dialect: Postgres, Inputs: map[string]Param{"fn": {Enum: []string{"lower", "pg_sleep"}}, "id": {}},
		LookupEnv: env, Safety: Rules{BlockFunctions: []string{"pg_sleep"}, OneStatement: true}}

	// An env value is checked too, and the error names the variable.
	_, err := Compile("SELECT 1,\n  {{ env.HIDDEN }}", opts)
	if err == nil || err.Error() != `line 2, column 3: calls pg_sleep(), which block_functions refuses on this connector (in the value of environment variable "HIDDEN")` {
		t.Errorf("env: %v", err)
	}
	// An enum input in function-name position may not offer a blocked name.
	_, err = Compile("SELECT {{ inputs.fn | ident }}({{ inputs.id }})", opts)
	if err == nil || !strings.Contains(err.Error(), "line 1, column 8: calls pg_sleep()") {
		t.Errorf("enum: %v", err)
	}
	// Placeholders are values: nothing to refuse.
	if _, err := Compile("SELECT lower({{ inputs.id }})", opts); err != nil {
		t.Error(err)
	}
}

func TestSafetyBlockPatterns(t *testing.T) {
	runSafetyCases(t, Rules{BlockFunctions: []string{"lo_*", "pg_create_*_replication_slot"}}, []safetyCase{
		{Postgres, "SELECT lo_from_bytea(0, 'x')", "calls lo_from_bytea()"},
		{Postgres, "SELECT pg_catalog.LO_UNLINK(1)", "calls lo_unlink()"},
		{Postgres, "SELECT pg_create_logical_replication_slot('s', 'p')", "calls pg_create_logical_replication_slot()"},
		{Postgres, "SELECT lower('x'), lo FROM t", ""},
		{Postgres, "SELECT pg_create_slot()", ""},
		{Postgres, "SELECT pg_create__replication_slotx()", ""},
	})
}

func TestSafetyReadOnlyDefaults(t *testing.T) {
	for _, d := range []Dialect{Postgres, MySQL, SQLite} {
		if len(ReadOnlyBlockList(d)) == 0 {
			t.Errorf("%s: no default block list", d)
		}
	}
	const byDefault = "which a read_only connector refuses by default"
	pg := Rules{ReadOnly: true, OneStatement: true, DefaultBlocked: ReadOnlyBlockList(Postgres)}
	runSafetyCases(t, pg, []safetyCase{
		{Postgres, "SELECT lo_from_bytea(0, {{ inputs.id }})", "calls lo_from_bytea(), " + byDefault},
		{Postgres, "SELECT set_config('statement_timeout', '0', false)", "calls set_config()"},
		{Postgres, "SELECT pg_advisory_lock(1)", "calls pg_advisory_lock()"},
		{Postgres, "SELECT pg_try_advisory_lock_shared(1)", "calls pg_try_advisory_lock_shared()"},
		{Postgres, "SELECT pg_notify('c', 'x')", "calls pg_notify()"},
		{Postgres, "SELECT query_to_xml('select 1', true, false, '')", "calls query_to_xml()"},
		{Postgres, "SELECT current_setting('statement_timeout'), pg_try_advisory_lock_shared FROM t", ""},
		{Postgres, "SELECT nextval('s')", ""}, // READ ONLY refuses it: not listed
	})
	my := Rules{ReadOnly: true, OneStatement: true, DefaultBlocked: ReadOnlyBlockList(MySQL)}
	runSafetyCases(t, my, []safetyCase{
		{MySQL, "SELECT GET_LOCK('a', 0)", "calls get_lock()"},
		{MySQL, "SELECT load_file('/etc/passwd')", "calls load_file()"},
		{MySQL, "SELECT @v := {{ inputs.id }}", ":= assigns a user variable"},
		{MySQL, "SELECT @`v` := 1", ":= assigns a user variable"},
		{MySQL, "SELECT @v, @@version, a = 1 FROM t", ""},
		{MySQL, "SELECT ':=' FROM t", ""},
	})
	// The operator's list says "block_functions", the default its origin.
	both := Rules{BlockFunctions: []string{"set_config"}, DefaultBlocked: ReadOnlyBlockList(Postgres)}
	runSafetyCases(t, both, []safetyCase{{Postgres, "SELECT set_config('a', 'b', false)", "which block_functions refuses"}})
	// Off read_only, := is MySQL's own business (and Postgres named arguments).
	runSafetyCases(t, Rules{OneStatement: true}, []safetyCase{{MySQL, "SELECT @v := 1", ""}, {Postgres, "SELECT f(a := 1)", ""}})
}
