package sqlite_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/sqlite"
)

// TestTypes reads stored values of every storage class through the
// declared types that change their meaning, plus a row of NULLs.
func TestTypes(t *testing.T) {
	path := newDB(t,
		`CREATE TABLE v (id INTEGER PRIMARY KEY, i INTEGER, big INTEGER, b BOOLEAN, b2 BOOL,
			r REAL, t TEXT, vc VARCHAR(10), bl BLOB, d DATE, dt DATETIME, ts TIMESTAMP,
			dtx DATETIME, di DATETIME, j JSON, jbad JSON, untyped)`,
		`INSERT INTO v VALUES (1, 42, 9007199254740993, 1, 0,
			1.5, 'héllo', 'vc', x'deadbeef', '2024-02-29', '2024-05-01 12:34:56.789', '2024-05-01T12:34:56+02:00',
			'not a time', 1714566896, '{"b":1,  "a":[1,12345678901234567890]}', '{oops', 'u')`,
		`INSERT INTO v (id) VALUES (2)`)

	wantCols := []string{"id", "i", "big", "b", "b2", "r", "t", "vc", "bl", "d", "dt", "ts", "dtx", "di", "j", "jbad", "untyped"}
	wantRow := []any{int64(1), int64(42), "9007199254740993", true, false,
		1.5, "héllo", "vc", "3q2+7w==", "2024-02-29", "2024-05-01T12:34:56.789Z", "2024-05-01T10:34:56Z",
		"not a time", int64(1714566896), raw(`{"b":1,  "a":[1,12345678901234567890]}`), "{oops", "u"}

	for _, readOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("ro=%v", readOnly), func(t *testing.T) {
			c := open(t, sqlite.Config{Path: path, ReadOnly: readOnly})
			rows := query(t, c, "SELECT * FROM v ORDER BY id")
			sameValue(t, "columns", rows.Columns, wantCols)
			if len(rows.Values) != 2 {
				t.Fatalf("got %d rows, want 2", len(rows.Values))
			}
			for i, col := range wantCols {
				sameValue(t, col, rows.Values[0][i], wantRow[i])
				want := any(nil)
				if col == "id" {
					want = int64(2)
				}
				sameValue(t, col+" (NULL row)", rows.Values[1][i], want)
			}
		})
	}
}

// TestExpressions: values with no declared type follow their storage
// class.
func TestExpressions(t *testing.T) {
	c := open(t, sqlite.Config{Path: newDB(t)})
	cases := []struct {
		expr string
		want any
	}{
		{"NULL", nil},
		{"7", int64(7)},
		{"-9007199254740993", "-9007199254740993"},
		{"0.25", 0.25},
		{"1e999", "Infinity"},
		{"-1e999", "-Infinity"},
		{"'text'", "text"},
		{"x'00ff'", "AP8="},
		{"json_array(1, 'a')", "[1,\"a\"]"}, // no declared type: plain text
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			sameValue(t, tc.expr, scalar(t, c, "SELECT "+tc.expr), tc.want)
		})
	}
}

// TestArgs binds every argument type the pipeline hands over.
func TestArgs(t *testing.T) {
	c := open(t, sqlite.Config{Path: newDB(t, "CREATE TABLE ev (at DATETIME, on_day DATE, ok BOOLEAN)")})
	at := time.Date(2024, 5, 1, 12, 0, 0, 500000000, time.FixedZone("+02", 2*3600))

	query(t, c, "INSERT INTO ev VALUES (?, ?, ?)", at, time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), true)
	rows := query(t, c, "SELECT at, on_day, ok, typeof(at), typeof(ok) FROM ev")
	sameValue(t, "round trip", rows.Values, [][]any{{"2024-05-01T10:00:00.5Z", "2024-05-01", true, "text", "integer"}})

	cases := []struct {
		sql  string
		args []any
		want any
	}{
		{"SELECT ? IS NULL", []any{nil}, int64(1)},
		{"SELECT ? || '!'", []any{"hi"}, "hi!"},
		{"SELECT ? + 1", []any{int64(41)}, int64(42)},
		{"SELECT ? * 2", []any{1.25}, 2.5},
		{"SELECT ?", []any{false}, int64(0)},
		{"SELECT ?", []any{at}, "2024-05-01T10:00:00.5Z"},
		{"SELECT datetime(?)", []any{at}, "2024-05-01 10:00:00"}, // SQLite reads what we bind
		{"SELECT sum(value) FROM json_each(?)", []any{[]int64{1, 2, 3}}, int64(6)},
		{"SELECT group_concat(value, ',') FROM json_each(?)", []any{[]string{"a", "b"}}, "a,b"},
		{"SELECT count(*) FROM json_each(?)", []any{[]float64{0.5, 1}}, int64(2)},
		{"SELECT json_extract(?, '$[1]')", []any{[]bool{true, false}}, int64(0)},
		{"SELECT json_extract(?, '$[0]')", []any{[]time.Time{at}}, "2024-05-01T10:00:00.5Z"},
		{"SELECT json_extract(?, '$.k')", []any{map[string]any{"k": "v"}}, "v"},
		{"SELECT json_array_length(?)", []any{[]any{int64(1), "a", nil}}, int64(3)},
		{"SELECT ?1 + ?1", []any{int64(21)}, int64(42)},
	}
	for _, tc := range cases {
		t.Run(tc.sql, func(t *testing.T) {
			sameValue(t, tc.sql, scalar(t, c, tc.sql, tc.args...), tc.want)
		})
	}
}
