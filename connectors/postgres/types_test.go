package postgres_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

type raw = json.RawMessage
type num = json.Number

// typeCases maps a PostgreSQL expression to its normalized value
// (doc.go).
var typeCases = []struct {
	expr string
	want any
}{
	// NULL of any type
	{"NULL::int8", nil},
	{"NULL::jsonb", nil},
	{"NULL::int4[]", nil},

	{"true", true},
	{"false", false},

	// integers: int8 beyond 2^53 becomes a string
	{"42::int2", int64(42)},
	{"-7::int4", int64(-7)},
	{"9007199254740992::int8", int64(9007199254740992)},
	{"-9007199254740992::int8", int64(-9007199254740992)},
	{"9007199254740993::int8", "9007199254740993"},
	{"(-9223372036854775807 - 1)::int8", "-9223372036854775808"},
	{"12345::oid", int64(12345)},

	// floats
	{"1.5::float8", 1.5},
	{"0.1::float8", 0.1},
	{"0.1::float4", 0.1}, // not 0.10000000149011612
	{"'NaN'::float8", "NaN"},
	{"'Infinity'::float8", "Infinity"},
	{"'-Infinity'::float4", "-Infinity"},

	// numeric: json.Number when exact through float64, else string
	{"1.50::numeric", num("1.50")},
	{"0.1::numeric", num("0.1")},
	{"-0.000123::numeric", num("-0.000123")},
	{"1e21::numeric", num("1000000000000000000000")},
	{"9007199254740993::numeric", "9007199254740993"},
	{"123456789012345678901234567890::numeric", "123456789012345678901234567890"},
	{"1234567890.12345678901234567890::numeric", "1234567890.12345678901234567890"},
	{"'NaN'::numeric", "NaN"},
	{"'Infinity'::numeric", "Infinity"},
	{"'-Infinity'::numeric", "-Infinity"},

	// character types
	{"'héllo'::text", "héllo"},
	{"'ab'::varchar(5)", "ab"},
	{"'ab'::char(4)", "ab  "},
	{"'nm'::name", "nm"},
	{`'a'::"char"`, "a"},
	{"'lit'", "lit"},

	{"'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
	{`'\xdeadbeef'::bytea`, "3q2+7w=="},
	{`''::bytea`, ""},

	// json verbatim (json) or as jsonb prints it; big numbers keep every digit
	{`'{"b":1,  "a":[1,2.50,12345678901234567890]}'::json`, raw(`{"b":1,  "a":[1,2.50,12345678901234567890]}`)},
	{`'{"b":1,"a":[1,2.50,12345678901234567890]}'::jsonb`, raw(`{"a": [1, 2.50, 12345678901234567890], "b": 1}`)},
	{`'"s"'::jsonb`, raw(`"s"`)},
	{`'null'::jsonb`, raw(`null`)},

	// time
	{"'2024-05-01 12:34:56.789+02'::timestamptz", "2024-05-01T10:34:56.789Z"},
	{"'2024-05-01 12:34:56.000001+00'::timestamptz", "2024-05-01T12:34:56.000001Z"},
	{"'2024-05-01 12:34:56'::timestamp", "2024-05-01T12:34:56"},
	{"'infinity'::timestamptz", "infinity"},
	{"'-infinity'::timestamp", "-infinity"},
	{"'2024-02-29'::date", "2024-02-29"},
	{"'infinity'::date", "infinity"},
	{"'08:30:00'::time", "08:30:00"},
	{"'08:30:00.25'::time", "08:30:00.25"},
	{"'24:00:00'::time", "24:00:00"},
	{"'08:30:00+02'::timetz", "08:30:00+02"},
	{"'1 year 2 mons -3 days 04:05:06.5'::interval", "1 year 2 mons -3 days +04:05:06.5"},
	{"'-1 year -2 mons +3 days -04:05:06'::interval", "-1 years -2 mons +3 days -04:05:06"},
	{"'-00:00:01'::interval", "-00:00:01"},
	{"'0'::interval", "00:00:00"},
	{"'1 mon -1 days'::interval", "1 mon -1 days"},
	{"'100 hours'::interval", "100:00:00"},
	{"'-1 days +1 hour'::interval", "-1 days +01:00:00"},
	{"'1 day 0.000001 sec'::interval", "1 day 00:00:00.000001"},

	// network
	{"'192.168.0.1'::inet", "192.168.0.1"},
	{"'192.168.1.5/24'::inet", "192.168.1.5/24"},
	{"'::1'::inet", "::1"},
	{"'10.0.0.0/8'::cidr", "10.0.0.0/8"},
	{"'08:00:2B:01:02:03'::macaddr", "08:00:2b:01:02:03"},
	{"'08:00:2b:01:02:03:04:05'::macaddr8", "08:00:2b:01:02:03:04:05"},

	// anything else: PostgreSQL's text form
	{"'(1,2)'::point", "(1,2)"},
	{"'[1,5)'::int4range", "[1,5)"},
	{"ROW(1, 'a b')", `(1,"a b")`},
	{"'<a/>'::xml", "<a/>"},
	{"'a:1 b:2'::tsvector", "'a':1 'b':2"},
	{"B'101'", "101"},

	// arrays, element-wise
	{"ARRAY[1, 2, NULL]::int8[]", []any{int64(1), int64(2), nil}},
	{"ARRAY[9007199254740993]::int8[]", []any{"9007199254740993"}},
	{"'{{1,2},{3,4}}'::int4[]", []any{[]any{int64(1), int64(2)}, []any{int64(3), int64(4)}}},
	{"'[0:1]={5,6}'::int4[]", []any{int64(5), int64(6)}},
	{"'{}'::text[]", []any{}},
	{`ARRAY['a', 'b,c', 'd"e', NULL, 'NULL', '']::text[]`, []any{"a", "b,c", `d"e`, nil, "NULL", ""}},
	{"ARRAY[1.5, 123456789012345678901234567890, 'NaN']::numeric[]", []any{num("1.5"), "123456789012345678901234567890", "NaN"}},
	{"ARRAY['NaN', 0.25]::float8[]", []any{"NaN", 0.25}},
	{"ARRAY[true, NULL]", []any{true, nil}},
	{"ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid]", []any{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}},
	{`ARRAY['{"a":1}'::jsonb, NULL]`, []any{raw(`{"a": 1}`), nil}},
	{`ARRAY['[1, 2]'::json]`, []any{raw(`[1, 2]`)}},
	{`ARRAY['\x01ff'::bytea]`, []any{"Af8="}},
	{"ARRAY['2024-05-01 12:00:00+02'::timestamptz]", []any{"2024-05-01T10:00:00Z"}},
	{"ARRAY['2024-05-01'::date]", []any{"2024-05-01"}},
	{"ARRAY['1 day'::interval, '-2 hours']", []any{"1 day", "-02:00:00"}},
	{"ARRAY['10.1.2.3'::inet]", []any{"10.1.2.3"}},
	{"ARRAY['(1,2)'::point, NULL, '(3,4)']", []any{"(1,2)", nil, "(3,4)"}},
	{"ARRAY['(1,1),(0,0)'::box, '(2,2),(1,1)']", []any{"(1,1),(0,0)", "(2,2),(1,1)"}},
	{"ARRAY['[1,5)'::int4range]", []any{"[1,5)"}},
	{"ARRAY['08:30:00+02'::timetz]", []any{"08:30:00+02"}},
}

func TestTypes(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		c := open(t, postgres.Config{ReadOnly: readOnly})
		for _, tc := range typeCases {
			t.Run(fmt.Sprintf("ro=%v/%s", readOnly, tc.expr), func(t *testing.T) {
				got := scalar(t, c, "SELECT "+tc.expr+" AS v")
				sameValue(t, tc.expr, got, tc.want)
			})
		}
	}
}

// TestTypesFromTable reads real columns of every type, a row of values and
// a row of NULLs, through both execution paths.
func TestTypesFromTable(t *testing.T) {
	admin := testservices.PostgresConn(t)
	s := testservices.PostgresSchema(t, admin)
	table := s + ".all_types"
	testservices.PostgresExec(t, admin, `CREATE TABLE `+table+` (
		id int8 PRIMARY KEY, b bool, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8,
		n numeric, n30 numeric(30,0), t text, vc varchar(10), u uuid, by bytea,
		j json, jb jsonb, ts timestamp, tstz timestamptz, d date, tm time,
		iv interval, ip inet, ia int8[], ta text[], ja jsonb[])`)
	testservices.PostgresExec(t, admin, `INSERT INTO `+table+` VALUES (1, true, 1, 2, 9007199254740993, 0.5, 'NaN',
		'NaN', 123456789012345678901234567890, 'x', 'y', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\x00ff',
		'{"k":[1]}', '{"k":[1]}', '2024-01-02 03:04:05', '2024-01-02 03:04:05+01', '2024-01-02', '03:04:05',
		'2 days', '127.0.0.1', '{1,9007199254740993}', '{a,NULL}', ARRAY['{"x":true}'::jsonb])`)
	testservices.PostgresExec(t, admin, `INSERT INTO `+table+` (id) VALUES (2)`)

	wantCols := []string{"id", "b", "i2", "i4", "i8", "f4", "f8", "n", "n30", "t", "vc", "u", "by",
		"j", "jb", "ts", "tstz", "d", "tm", "iv", "ip", "ia", "ta", "ja"}
	wantRow := []any{int64(1), true, int64(1), int64(2), "9007199254740993", 0.5, "NaN",
		"NaN", "123456789012345678901234567890", "x", "y", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "AP8=",
		raw(`{"k":[1]}`), raw(`{"k": [1]}`), "2024-01-02T03:04:05", "2024-01-02T02:04:05Z", "2024-01-02", "03:04:05",
		"2 days", "127.0.0.1", []any{int64(1), "9007199254740993"}, []any{"a", nil}, []any{raw(`{"x": true}`)}}
	nullRow := make([]any, len(wantCols))
	nullRow[0] = int64(2)

	for _, readOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("ro=%v", readOnly), func(t *testing.T) {
			c := open(t, postgres.Config{ReadOnly: readOnly})
			rows := query(t, c, "SELECT * FROM "+table+" ORDER BY id")
			sameValue(t, "columns", rows.Columns, wantCols)
			if len(rows.Values) != 2 {
				t.Fatalf("got %d rows, want 2", len(rows.Values))
			}
			for i, col := range wantCols {
				sameValue(t, col, rows.Values[0][i], wantRow[i])
				sameValue(t, col+" (NULL row)", rows.Values[1][i], nullRow[i])
			}
		})
	}
}

// TestTypesUnknownToPgx covers types pgx has no codec for: they arrive as
// text, and their arrays are recognized through pg_type.
func TestTypesUnknownToPgx(t *testing.T) {
	admin := testservices.PostgresConn(t)
	s := testservices.PostgresSchema(t, admin)
	testservices.PostgresExec(t, admin, "CREATE TYPE "+s+".mood AS ENUM ('sad', 'ok', 'happy')")
	testservices.PostgresExec(t, admin, "CREATE DOMAIN "+s+".posint AS int4 CHECK (VALUE > 0)")
	citext := "citext"
	var installed bool
	if err := admin.QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citext')").Scan(&installed); err != nil {
		t.Fatal(err)
	}
	if !installed {
		// Installed into the test schema, so it goes away with it.
		testservices.PostgresExec(t, admin, "CREATE EXTENSION citext WITH SCHEMA "+s)
		citext = s + ".citext"
	}

	cases := []struct {
		expr string
		want any
	}{
		{"'ok'::" + s + ".mood", "ok"},
		{"ARRAY['sad', 'happy', NULL]::" + s + ".mood[]", []any{"sad", "happy", nil}},
		{"'MiXeD'::" + citext, "MiXeD"},
		{"ARRAY['A b', 'c,d']::" + citext + "[]", []any{"A b", "c,d"}},
		{"5::" + s + ".posint", int64(5)}, // reported under its base type
		{"ARRAY[1, 2]::" + s + ".posint[]", []any{int64(1), int64(2)}},
	}
	for _, readOnly := range []bool{false, true} {
		c := open(t, postgres.Config{ReadOnly: readOnly})
		for _, tc := range cases {
			t.Run(fmt.Sprintf("ro=%v/%s", readOnly, tc.expr), func(t *testing.T) {
				// Twice: the first resolves the type through pg_type, the
				// second uses the connector's cache.
				for range 2 {
					sameValue(t, tc.expr, scalar(t, c, "SELECT "+tc.expr+" AS v"), tc.want)
				}
			})
		}
	}
}
