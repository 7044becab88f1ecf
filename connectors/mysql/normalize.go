package mysql

import (
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/edgemcp/edgemcp/connectors/internal/sqlrows"
	"github.com/edgemcp/edgemcp/pipeline"
)

// kind is how the values of a column are normalized, chosen once per
// column from the type the server reports.
type kind int

const (
	kindText      kind = iota // CHAR, VARCHAR, TEXT, ENUM, SET, TIME, DATE, YEAR text ...
	kindInt                   // TINYINT ... BIGINT, YEAR
	kindUint                  // UNSIGNED BIGINT and the other unsigned integers
	kindFloat                 // FLOAT, DOUBLE
	kindFloat32               // FLOAT: shortest decimal of the float32
	kindDecimal               // DECIMAL: exact
	kindDateTime              // DATETIME: wall clock, RFC 3339 without offset
	kindTimestamp             // TIMESTAMP: an instant, RFC 3339 in UTC (session time_zone is +00:00)
	kindJSON                  // JSON (MySQL; MariaDB reports LONGTEXT)
	kindBinary                // BLOB, BINARY, VARBINARY, GEOMETRY: base64
	kindBit                   // BIT(n): its unsigned value
)

func kindOf(typeName string) kind {
	switch typeName {
	case "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT", "YEAR":
		return kindInt
	case "UNSIGNED TINYINT", "UNSIGNED SMALLINT", "UNSIGNED MEDIUMINT", "UNSIGNED INT", "UNSIGNED BIGINT":
		return kindUint
	case "DOUBLE":
		return kindFloat
	case "FLOAT":
		return kindFloat32
	case "DECIMAL":
		return kindDecimal
	case "DATETIME":
		return kindDateTime
	case "TIMESTAMP":
		return kindTimestamp
	case "JSON":
		return kindJSON
	case "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "BINARY", "VARBINARY", "GEOMETRY":
		return kindBinary
	case "BIT":
		return kindBit
	}
	return kindText
}

// limits bound a result as collect reads it.
type limits = sqlrows.Limits

// collect reads every row, normalized, and closes rows (sqlrows.Collect);
// abandon keeps the driver from reading the rest of a result cut short.
func collect(rows *sql.Rows, lim limits, abandon func()) (*pipeline.Rows, string, error) {
	return sqlrows.Collect(rows, lim, normalizer, abandon)
}

// normalizer normalizes a column's values by the type the server reports.
func normalizer(ct *sql.ColumnType) func(any) (any, error) {
	k := kindOf(ct.DatabaseTypeName())
	return func(v any) (any, error) { return normalize(k, v) }
}

// normalize turns one driver value into a JSON-ready value. The text
// protocol (statements without arguments) gives []byte for everything;
// the binary protocol gives int64, uint64, float32, float64, or []byte
// for decimals, strings, dates and binary data.
func normalize(k kind, v any) (any, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case int64:
		return pipeline.SafeInt(v), nil
	case uint64:
		return pipeline.SafeUint(v), nil
	case float32:
		return floatValue(float64(v), 32), nil
	case float64:
		return floatValue(v, 64), nil
	case []byte:
		return bytesValue(k, v)
	case string:
		return bytesValue(k, []byte(v))
	}
	return fmt.Sprint(v), nil
}

func bytesValue(k kind, b []byte) (any, error) {
	switch k {
	case kindInt:
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return nil, err
		}
		return pipeline.SafeInt(n), nil
	case kindUint:
		n, err := strconv.ParseUint(string(b), 10, 64)
		if err != nil {
			return nil, err
		}
		return pipeline.SafeUint(n), nil
	case kindFloat, kindFloat32:
		f, err := strconv.ParseFloat(string(b), 64)
		if err != nil {
			return nil, err
		}
		return floatValue(f, 64), nil
	case kindDecimal:
		return decimalValue(string(b)), nil
	case kindDateTime:
		return dateTimeValue(string(b), ""), nil
	case kindTimestamp:
		return dateTimeValue(string(b), "Z"), nil
	case kindJSON:
		if json.Valid(b) {
			return json.RawMessage(b), nil
		}
		return string(b), nil
	case kindBinary:
		return base64.StdEncoding.EncodeToString(b), nil
	case kindBit:
		if len(b) > 8 {
			return nil, fmt.Errorf("BIT value of %d bytes", len(b))
		}
		var buf [8]byte
		copy(buf[8-len(b):], b)
		return pipeline.SafeUint(binary.BigEndian.Uint64(buf[:])), nil
	}
	return string(b), nil
}

// floatValue widens a FLOAT through its shortest decimal, so a FLOAT 0.1
// is 0.1, not 0.10000000149011612. MySQL stores no NaN or infinity.
func floatValue(f float64, bits int) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if bits == 32 {
		f, _ = strconv.ParseFloat(strconv.FormatFloat(f, 'g', -1, 32), 64)
	}
	return f
}

// decimalValue is a JSON number (written as the server wrote it, scale
// kept, as the postgres connector does) when a client parsing it as a
// double reads exactly that number; else the exact decimal as a string, so
// a DECIMAL(65,30) never silently loses digits.
func decimalValue(s string) any {
	exact, ok := new(big.Rat).SetString(s)
	if !ok {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return s
	}
	back, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if ok && exact.Cmp(back) == 0 {
		return json.Number(s)
	}
	return s
}

// dateTimeValue turns the server's "YYYY-MM-DD HH:MM:SS[.ffffff]" into RFC
// 3339 with the given offset suffix. The zero date and other values that
// are not a calendar time stay as the server wrote them.
func dateTimeValue(s, zone string) string {
	if len(s) < 19 || s[10] != ' ' || strings.HasPrefix(s, "0000-00-00") {
		return s
	}
	return s[:10] + "T" + s[11:] + zone
}
