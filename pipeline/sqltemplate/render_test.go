package sqltemplate

import (
	"reflect"
	"sync"
	"testing"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name   string
		d      Dialect
		src    string
		values map[string]any
		sql    string
		args   []any
		err    string
	}{
		{"pg reuses arguments", Postgres, "SELECT {{inputs.a}}, {{inputs.b}}, {{inputs.a}}",
			map[string]any{"a": 1, "b": "x"},
			"SELECT $1, $2, $1", []any{1, "x"}, ""},
		{"sqlite repeats arguments", SQLite, "SELECT {{inputs.a}}, {{inputs.b}}, {{inputs.a}}",
			map[string]any{"a": 1, "b": "x"},
			"SELECT ?, ?, ?", []any{1, "x", 1}, ""},
		{"mysql repeats arguments", MySQL, "SELECT {{inputs.b}}, {{inputs.a}}, {{inputs.b}}",
			map[string]any{"a": 1, "b": "x"},
			"SELECT ?, ?, ?", []any{"x", 1, "x"}, ""},
		{"missing value is NULL", Postgres, "SELECT {{inputs.a}}, {{inputs.b}}",
			map[string]any{"b": 2},
			"SELECT $1, $2", []any{nil, 2}, ""},
		{"nil values", SQLite, "SELECT {{inputs.a}}", nil,
			"SELECT ?", []any{nil}, ""},
		{"injection attempt stays an argument", Postgres, "SELECT * FROM t WHERE n = {{ inputs.q }}",
			map[string]any{"q": "x'; DROP TABLE t; --"},
			"SELECT * FROM t WHERE n = $1", []any{"x'; DROP TABLE t; --"}, ""},
		{"no parameters", Postgres, "SELECT 1", nil, "SELECT 1", []any{}, ""},

		{"pg identifier", Postgres, "SELECT * FROM t ORDER BY {{ inputs.sort }} LIMIT {{ inputs.a }}",
			map[string]any{"sort": "created_at", "a": 5},
			`SELECT * FROM t ORDER BY "created_at" LIMIT $1`, []any{5}, ""},
		{"pg dotted identifier", Postgres, "SELECT * FROM t ORDER BY {{ inputs.sort }}",
			map[string]any{"sort": "s.t"},
			`SELECT * FROM t ORDER BY "s"."t"`, []any{}, ""},
		{"pg quote doubled", Postgres, "SELECT * FROM t ORDER BY {{ inputs.sort }}",
			map[string]any{"sort": `we"ird`},
			`SELECT * FROM t ORDER BY "we""ird"`, []any{}, ""},
		{"sqlite identifier", SQLite, "SELECT * FROM {{ inputs.tbl }} WHERE a = {{ inputs.a }} ORDER BY {{ inputs.sort }}",
			map[string]any{"tbl": "audit.log", "sort": "name", "a": "z"},
			"SELECT * FROM `audit`.`log` WHERE a = ? ORDER BY `name`", []any{"z"}, ""},
		{"mysql identifier", MySQL, "SELECT * FROM {{ inputs.tbl }} ORDER BY {{ inputs.sort }}, x",
			map[string]any{"tbl": "audit.log", "sort": "back`tick"},
			"SELECT * FROM `audit`.`log` ORDER BY `back``tick`, x", []any{}, ""},
		{"mysql keeps double quote", MySQL, "SELECT * FROM t ORDER BY {{ inputs.sort }}",
			map[string]any{"sort": `we"ird`},
			"SELECT * FROM t ORDER BY `we\"ird`", []any{}, ""},
		{"same enum as identifier and value", Postgres, "SELECT * FROM t WHERE {{ inputs.sort | ident }} = {{ inputs.sort }}",
			map[string]any{"sort": "name"},
			`SELECT * FROM t WHERE "name" = $1`, []any{"name"}, ""},
		{"padding kept in rendered SQL", Postgres, `SELECT "x"{{ inputs.sort | ident }}`,
			map[string]any{"sort": "name"},
			`SELECT "x" "name"`, []any{}, ""},

		{"value not in allow-list", Postgres, "SELECT * FROM t ORDER BY {{ inputs.sort }}",
			map[string]any{"sort": "name; DROP TABLE t"}, "", nil,
			`input "sort" must be one of "name", "created_at", "s.t", "we\"ird", "back` + "`" + `tick"`},
		{"allow-list is case-sensitive", SQLite, "SELECT * FROM t ORDER BY {{ inputs.sort }}",
			map[string]any{"sort": "NAME"}, "", nil,
			`input "sort" must be one of "name", "created_at", "s.t", "we\"ird", "back` + "`" + `tick"`},
		{"identifier missing", Postgres, "SELECT * FROM {{ inputs.tbl }}",
			map[string]any{}, "", nil,
			`input "tbl" is required: it names a column or table, one of "users", "audit.log"`},
		{"identifier null", Postgres, "SELECT * FROM {{ inputs.tbl }}",
			map[string]any{"tbl": nil}, "", nil,
			`input "tbl" is required: it names a column or table, one of "users", "audit.log"`},
		{"identifier not a string", MySQL, "SELECT * FROM {{ inputs.tbl }}",
			map[string]any{"tbl": 1}, "", nil,
			`input "tbl" must be a string naming a column or table, one of "users", "audit.log"`},
	}
	for _, tt := range tests {
		t.Run(tt.d.String()+"/"+tt.name, func(t *testing.T) {
			st, err := compileTest(tt.src, tt.d)
			if err != nil {
				t.Fatalf("Compile(%q): %v", tt.src, err)
			}
			sql, args, err := st.Render(tt.values)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("Render error = %v\nwant %s", err, tt.err)
				}
				if sql != "" || args != nil {
					t.Errorf("Render returned %q %v with an error", sql, args)
				}
				return
			}
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if sql != tt.sql {
				t.Errorf("sql\n got %s\nwant %s", sql, tt.sql)
			}
			if !reflect.DeepEqual(args, tt.args) {
				t.Errorf("args = %#v, want %#v", args, tt.args)
			}
		})
	}
}

// TestRenderConcurrent is for -race: a Statement is shared by every call of
// a tool.
func TestRenderConcurrent(t *testing.T) {
	st, err := compileTest("SELECT * FROM {{ inputs.tbl }} WHERE a = {{ inputs.a }} ORDER BY {{ inputs.sort }}", SQLite)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 200 {
				sort := []string{"name", "s.t"}[(i+j)%2]
				sql, args, err := st.Render(map[string]any{"tbl": "users", "a": j, "sort": sort})
				want := "SELECT * FROM `users` WHERE a = ? ORDER BY `name`"
				if sort == "s.t" {
					want = "SELECT * FROM `users` WHERE a = ? ORDER BY `s`.`t`"
				}
				if err != nil || sql != want || len(args) != 1 || args[0] != j {
					t.Errorf("Render: %q %v %v", sql, args, err)
					return
				}
				_ = st.Tokens()
				_ = st.Params()
			}
		})
	}
	wg.Wait()
}

// TestStatementAccessorsCopy: callers may not change a shared Statement
// through the slices it hands out.
func TestStatementAccessorsCopy(t *testing.T) {
	st, err := compileTest("SELECT {{ inputs.a }}", Postgres)
	if err != nil {
		t.Fatal(err)
	}
	st.Params()[0] = "x"
	st.Tokens()[0].Text = "DELETE"
	if st.Params()[0] != "a" || st.Tokens()[0].Text != "SELECT" {
		t.Error("Params or Tokens share their backing array")
	}
}
