package mysql

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestTypes reads one row of every column type through both protocols the
// driver speaks: text (a statement without arguments) and binary (a
// prepared statement with arguments). Both must normalize alike.
func TestTypes(t *testing.T) {
	c := open(t, Config{})
	tbl := testservices.MySQLTable(t, "types")
	testservices.MySQLExec(t, `CREATE TABLE `+tbl+` (
		id INT PRIMARY KEY,
		ti TINYINT, si SMALLINT, mi MEDIUMINT, i INT, bi BIGINT, bis BIGINT,
		ubi BIGINT UNSIGNED, ui INT UNSIGNED,
		f FLOAT, d DOUBLE, dec1 DECIMAL(10,2), dec2 DECIMAL(65,30),
		dt DATETIME(6), ts TIMESTAMP(3) NULL, dd DATE, tt TIME, yy YEAR,
		js JSON, bl BLOB, vb VARBINARY(8), b8 BIT(8), b64 BIT(64),
		vc VARCHAR(20), tx TEXT, en ENUM('a','b'), st SET('x','y'), n INT NULL)`)
	// Inserted through the connector: its session is in UTC, so the
	// TIMESTAMP literal is a UTC instant.
	conntest.Query(t, c, `INSERT INTO `+tbl+` VALUES (1,
		-128, -32768, -8388608, -2147483648, -9007199254740992, 9007199254740993,
		18446744073709551615, 4294967295,
		0.1, 1.5, 12.50, 1.123456789012345678901234567890,
		'2024-05-01 12:00:00.123456', '2024-05-01 12:00:00.500', '2024-05-01', '-838:59:59', 2024,
		'{"a": [1, 2]}', x'00FF10', x'00FF10', b'10000001', x'FFFFFFFFFFFFFFFF',
		'héllo', 'multi
line', 'b', 'x,y', NULL)`)

	js := any(json.RawMessage(`{"a": [1, 2]}`))
	if isMariaDB(t, c) {
		// MariaDB's JSON is LONGTEXT with a check constraint, and its
		// protocol (as the driver speaks it) does not say otherwise.
		js = `{"a": [1, 2]}`
	}
	want := map[string]any{
		"id": int64(1), "ti": int64(-128), "si": int64(-32768), "mi": int64(-8388608), "i": int64(-2147483648),
		"bi": int64(-9007199254740992), "bis": "9007199254740993",
		"ubi": "18446744073709551615", "ui": int64(4294967295),
		"f": 0.1, "d": 1.5, "dec1": json.Number("12.50"), "dec2": "1.123456789012345678901234567890",
		"dt": "2024-05-01T12:00:00.123456", "ts": "2024-05-01T12:00:00.500Z", "dd": "2024-05-01",
		"tt": "-838:59:59", "yy": int64(2024),
		"js": js, "bl": "AP8Q", "vb": "AP8Q", "b8": int64(129), "b64": "18446744073709551615",
		"vc": "héllo", "tx": "multi\nline", "en": "b", "st": "x,y", "n": nil,
	}
	for _, tc := range []struct {
		name string
		sql  string
		args []any
	}{
		{"text protocol", "SELECT * FROM " + tbl, nil},
		{"binary protocol", "SELECT * FROM " + tbl + " WHERE id = ?", []any{int64(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := conntest.Query(t, c, tc.sql, tc.args...)
			if len(rows.Values) != 1 {
				t.Fatalf("want 1 row, got %d", len(rows.Values))
			}
			if len(rows.Columns) != len(want) {
				t.Fatalf("columns %v, want %d", rows.Columns, len(want))
			}
			for i, col := range rows.Columns {
				conntest.SameValue(t, col, rows.Values[0][i], want[col])
			}
		})
	}
}

// TestBindArgs binds every value type the pipeline produces.
func TestBindArgs(t *testing.T) {
	c := open(t, Config{})
	at := time.Date(2024, 5, 1, 14, 0, 0, 123456000, time.FixedZone("+02", 7200))
	for _, tc := range []struct {
		name string
		sql  string
		arg  any
		want any
	}{
		{"string", "SELECT ? AS v", "it's \\ \"quoted\"\n", "it's \\ \"quoted\"\n"},
		{"int", "SELECT ? + 0 AS v", int64(9007199254740993), "9007199254740993"},
		{"float", "SELECT ? AS v", 1.25, 1.25},
		{"bool", "SELECT ? AS v", true, int64(1)},
		{"null", "SELECT ? IS NULL AS v", nil, int64(1)},
		{"datetime as UTC", "SELECT CAST(? AS DATETIME(6)) AS v", at, "2024-05-01T12:00:00.123456"},
		{"array as JSON", "SELECT JSON_LENGTH(?) AS v", []any{"a", int64(2)}, int64(2)},
		{"object as JSON", "SELECT JSON_UNQUOTE(JSON_EXTRACT(?, '$.k')) AS v", map[string]any{"k": "v"}, "v"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conntest.SameValue(t, tc.name, conntest.Scalar(t, c, tc.sql, tc.arg), tc.want)
		})
	}
}
