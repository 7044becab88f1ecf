package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/postgres"
)

// TestArgs binds every argument type the pipeline hands over.
func TestArgs(t *testing.T) {
	plus2 := time.FixedZone("+02", 2*3600)
	at := time.Date(2024, 5, 1, 12, 0, 0, 500000000, plus2)
	cases := []struct {
		sql  string
		args []any
		want any
	}{
		{"SELECT $1::int4 IS NULL", []any{nil}, true},
		{"SELECT $1::text || '!'", []any{"hi"}, "hi!"},
		{"SELECT $1::int8 + 1", []any{int64(41)}, int64(42)},
		{"SELECT $1::int8", []any{int64(1) << 60}, "1152921504606846976"},
		{"SELECT $1::float8 * 2", []any{1.25}, 2.5},
		{"SELECT $1::numeric", []any{0.1}, num("0.1")},
		{"SELECT $1::numeric", []any{int64(7)}, num("7")},
		{"SELECT NOT $1::bool", []any{true}, false},
		{"SELECT $1::timestamptz", []any{at}, "2024-05-01T10:00:00.5Z"},
		{"SELECT $1::timestamp", []any{at}, "2024-05-01T10:00:00.5"}, // UTC wall clock
		{"SELECT $1::date", []any{time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}, "2024-05-01"},
		{"SELECT $1::text[]", []any{[]string{"a", "b"}}, []any{"a", "b"}},
		{"SELECT $1::int8[]", []any{[]int64{1, 2}}, []any{int64(1), int64(2)}},
		{"SELECT $1::float8[]", []any{[]float64{0.5}}, []any{0.5}},
		{"SELECT $1::bool[]", []any{[]bool{true, false}}, []any{true, false}},
		{"SELECT $1::timestamptz[]", []any{[]time.Time{at}}, []any{"2024-05-01T10:00:00.5Z"}},
		{"SELECT $1::int8[]", []any{[]any{int64(3), int64(4)}}, []any{int64(3), int64(4)}},
		{"SELECT $1::jsonb", []any{map[string]any{"a": 1.5, "b": []any{"x"}}}, raw(`{"a": 1.5, "b": ["x"]}`)},
		{"SELECT $1::jsonb ->> 'k'", []any{map[string]any{"k": "v"}}, "v"},
		{"SELECT $1::json", []any{[]any{int64(1), "a", nil}}, raw(`[1,"a",null]`)},
		{"SELECT count(*) FROM jsonb_array_elements($1::jsonb)", []any{[]any{1.0, 2.0, 3.0}}, int64(3)},
		{"SELECT x FROM unnest($1::text[]) x WHERE x = $2", []any{[]string{"a", "b"}, "b"}, "b"},
		// A repeated parameter, as the template compiler emits for a name used twice.
		{"SELECT $1::int8 + $1::int8", []any{int64(21)}, int64(42)},
	}
	for _, readOnly := range []bool{false, true} {
		c := open(t, postgres.Config{ReadOnly: readOnly})
		for _, tc := range cases {
			t.Run(fmt.Sprintf("ro=%v/%s", readOnly, tc.sql), func(t *testing.T) {
				sameValue(t, tc.sql, scalar(t, c, tc.sql, tc.args...), tc.want)
			})
		}
	}
}
