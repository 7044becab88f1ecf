package sqltemplate

import (
	"strings"
	"testing"
)

// TestCheckAgentQuery pins what the agent check refuses in each dialect
// and what it lets through to the database.
func TestCheckAgentQuery(t *testing.T) {
	for _, tc := range []struct {
		d    Dialect
		sql  string
		want string // "" admits
	}{
		{Postgres, "SELECT * FROM t WHERE id = $1", ""},
		{Postgres, "(SELECT 1) UNION (SELECT 2)", ""},
		{Postgres, "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r LIMIT 3", ""},
		{Postgres, "TABLE t", ""},
		{Postgres, "SELECT 'DELETE FROM t; ' || $$;$$ -- ; DROP\n", ""},
		{Postgres, "SELECT 1 OPERATOR(pg_catalog.+) 1", ""},
		{Postgres, "SELECT 1;", ""},
		{Postgres, "", "no statement"},
		{Postgres, "  -- only a comment", "no statement"},
		{Postgres, "EXPLAIN SELECT 1", "EXPLAIN is not a query"},
		{Postgres, "SHOW search_path", "SHOW is not a query"},
		{Postgres, "SELECT 1 OPERATOR(public.+) 1", "outside pg_catalog"},
		{Postgres, `SELECT 1 OPERATOR("Public".+) 1`, "outside pg_catalog"},
		{Postgres, "SELECT pg_catalog.set_config('a.b', 'c', false)", "calls set_config()"},
		{Postgres, "SELECT dblink_exec('x', 'DELETE FROM t')", "calls dblink_exec()"},
		{Postgres, "SELECT * FROM ts_stat('SELECT 1')", "calls ts_stat()"},
		{Postgres, "SELECT my_fn(1)", ""},
		{Postgres, "SELECT '{{ x }}'", ""},
		{Postgres, "SELECT /* unterminated", "cannot be read"},
		{MySQL, "SELECT * FROM t WHERE id = ?", ""},
		{MySQL, `SELECT "sleep"(1)`, "calls sleep()"},
		{MySQL, "SELECT 1 /*M! , sleep(1) */", "executable comment"},
		{MySQL, "SELECT a--1 FROM t", ""},
		{MySQL, "SELECT 1 -- ; DELETE FROM t", ""},
		{MySQL, "SHOW TABLES", "SHOW is not a query"},
		{SQLite, "SELECT * FROM t WHERE id = ?1 OR id = ?", ""},
		{SQLite, "SELECT $x", "named parameter $x"},
		{SQLite, "SELECT * FROM [t]", ""},
		{SQLite, "PRAGMA table_info(t)", "PRAGMA is not a query"},
	} {
		err := CheckAgentQuery(tc.sql, tc.d, nil)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %q: %v", tc.d, tc.sql, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s %q: %v, want %q", tc.d, tc.sql, err, tc.want)
		}
	}
	if err := CheckAgentQuery("SELECT My_Fn(1)", Postgres, []string{"my_*"}); err == nil || !strings.Contains(err.Error(), "calls my_fn()") {
		t.Errorf("the connector's block_functions: %v", err)
	}
}
