package sqlagent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// unused stands for a connector in tests that never reach it.
type unused struct{ pipeline.AgentSQL }

func TestBuildChecks(t *testing.T) {
	db := unused{}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Prefix: "db", Dialect: sqltemplate.Postgres}, "cannot run agent-written SQL"},
		{Config{Prefix: "", DB: db, Dialect: sqltemplate.Postgres}, "prefix is empty"},
		{Config{Prefix: "d b", DB: db, Dialect: sqltemplate.Postgres}, "do not match"},
		{Config{Prefix: strings.Repeat("x", 60), DB: db, Dialect: sqltemplate.Postgres}, "do not match"},
		{Config{Prefix: "db", DB: db, Dialect: sqltemplate.MySQL, Role: "agent"}, "role applies to PostgreSQL"},
		{Config{Prefix: "db", DB: db, Dialect: sqltemplate.SQLite, MaxRowsEstimate: 10}, "SQLite's EXPLAIN QUERY PLAN"},
		{Config{Prefix: "db", DB: db, Dialect: sqltemplate.Postgres, Exclude: []string{"a["}}, "malformed"},
		{Config{Prefix: "db", DB: db, Dialect: sqltemplate.Postgres, MaxRows: -1}, "negative"},
	} {
		if _, err := Build(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Build(%+v): %v, want %q", tc.cfg, err, tc.want)
		}
	}
	tools, err := Build(Config{Prefix: "db", DB: db, Dialect: sqltemplate.MySQL, MaxCost: 500, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
		if tool.Annotations.ReadOnly == nil || !*tool.Annotations.ReadOnly || !json.Valid(tool.InputSchema) {
			t.Errorf("%s: annotations or schema wrong", tool.Name)
		}
	}
	if got := strings.Join(names, " "); got != "db_list_tables db_describe_table db_query db_explain" {
		t.Errorf("tools: %s", got)
	}
	for _, want := range []string{"MySQL/MariaDB", "Write parameters as ?", "at most 100 rows and 256 KiB", "10s per statement", "a planner cost of at most 500", "writes, DDL"} {
		if !strings.Contains(tools[2].Description, want) {
			t.Errorf("query description lacks %q: %s", want, tools[2].Description)
		}
	}
}

func TestFilter(t *testing.T) {
	f := filter{include: []string{"public.*", "audit.log"}, exclude: []string{"*_secret", "public.tmp_*"}}
	for _, tc := range []struct {
		schema, table string
		shown         bool
	}{
		{"public", "orders", true},
		{"public", "users_secret", false},
		{"public", "tmp_x", false},
		{"audit", "log", true},
		{"audit", "other", false},
		{"sales", "orders", false},
	} {
		if got := f.shown(tc.schema, tc.table); got != tc.shown {
			t.Errorf("shown(%s.%s) = %t", tc.schema, tc.table, got)
		}
	}
	x := filter{exclude: []string{"pii.*", "*.ssn", "secrets"}}
	for _, tc := range []struct {
		schema, table, def string
		excluded           bool
	}{
		{"pii", "users", "public", true},
		{"", "users", "public", false},
		{"", "ssn", "public", true},
		{"", "secrets", "main", true},
		{"", "users", "pii", true},
		{"", "users", "", true}, // MySQL: the current database is unknown
		{"public", "orders", "public", false},
	} {
		if got := x.excludedName(tc.schema, tc.table, tc.def); got != tc.excluded {
			t.Errorf("excludedName(%q, %q, %q) = %t", tc.schema, tc.table, tc.def, got)
		}
	}
}

func TestReadStatement(t *testing.T) {
	in := map[string]any{"sql": "SELECT $1", "params": []any{json.Number("42"), json.Number("1.5"), json.Number("12345678901234567890"), "x", nil, true, []any{json.Number("1")}}}
	sql, params, err := readStatement(in)
	if err != nil || sql != "SELECT $1" {
		t.Fatal(sql, err)
	}
	want := []any{int64(42), 1.5, 1.2345678901234567e19, "x", nil, true, []any{int64(1)}}
	if b, w := mustJSON(t, params), mustJSON(t, want); b != w {
		t.Errorf("params %s, want %s", b, w)
	}
	for _, bad := range []map[string]any{
		{},
		{"sql": 1},
		{"sql": "SELECT 1", "params": "x"},
		{"sql": "SELECT 1", "other": 1},
		{"sql": strings.Repeat("x", maxSQLSize+1)},
		{"sql": "SELECT 1", "params": make([]any, maxParams+1)},
	} {
		if _, _, err := readStatement(bad); err == nil {
			t.Errorf("readStatement(%.60v) accepted", bad)
		}
	}
}

func TestAnswerJSON(t *testing.T) {
	rows := &pipeline.Rows{Columns: []string{"id", "id", "<name>"}, Values: [][]any{{int64(1), int64(2), "a\"b"}}}
	if got := mustJSON(t, answer{rows: rows}); got != `{"columns":["id","id","\u003cname\u003e"],"rows":[[1,2,"a\"b"]],"row_count":1,"truncated":false}` {
		t.Errorf("whole: %s", got)
	}
	if got := mustJSON(t, answer{rows: &pipeline.Rows{Columns: []string{"x"}, Values: [][]any{}}, truncated: "max_rows 0"}); got != `{"columns":["x"],"rows":[],"row_count":0,"truncated":true,"reason":"max_rows 0"}` {
		t.Errorf("truncated: %s", got)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
