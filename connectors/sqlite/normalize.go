package sqlite

import (
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/edgemcp/edgemcp/connectors/internal/sqlrows"
	"github.com/edgemcp/edgemcp/pipeline"
)

// kind is what a column's declared type tells about its values.
type kind int

const (
	kindPlain kind = iota
	kindBool       // BOOLEAN, BOOL
	kindDate       // DATE
	kindTime       // DATETIME, TIMESTAMP
	kindJSON       // JSON
)

// kindOf classifies a declared type, as modernc reports it (upper case,
// with any "(n)" size).
func kindOf(decl string) kind {
	base, _, _ := strings.Cut(decl, "(")
	switch strings.TrimSpace(base) {
	case "BOOLEAN", "BOOL":
		return kindBool
	case "DATE":
		return kindDate
	case "DATETIME", "TIMESTAMP":
		return kindTime
	case "JSON":
		return kindJSON
	}
	return kindPlain
}

// limits bound a result as collect reads it.
type limits = sqlrows.Limits

// collect reads every row, normalized, and closes rows (sqlrows.Collect).
// Closing the rows stops the statement: SQLite computes no more.
func collect(rows *sql.Rows, lim limits) (*pipeline.Rows, string, error) {
	return sqlrows.Collect(rows, lim, normalizer, nil)
}

// normalizer normalizes a column's values by its declared type.
func normalizer(ct *sql.ColumnType) func(any) (any, error) {
	k := kindOf(ct.DatabaseTypeName())
	return func(v any) (any, error) { return normalize(k, v), nil }
}

// normalize turns one driver value (int64, float64, string, []byte,
// time.Time or nil) into a JSON-ready value.
func normalize(k kind, v any) any {
	switch v := v.(type) {
	case nil:
		return nil
	case int64:
		if k == kindBool {
			return v != 0
		}
		return pipeline.SafeInt(v)
	case float64:
		switch {
		case math.IsInf(v, 1):
			return "Infinity"
		case math.IsInf(v, -1):
			return "-Infinity"
		case math.IsNaN(v): // SQLite stores NaN as NULL; kept for safety
			return "NaN"
		}
		return v
	case string:
		if k == kindJSON && json.Valid([]byte(v)) {
			return json.RawMessage(v)
		}
		// Includes text in a DATE/DATETIME column that modernc could not
		// parse as a time: it stays as written.
		return v
	case []byte:
		if k == kindJSON && json.Valid(v) {
			return json.RawMessage(v)
		}
		return base64.StdEncoding.EncodeToString(v)
	case time.Time:
		return timeValue(k, v)
	case bool: // not produced by modernc today; cheap to accept
		return v
	}
	return fmt.Sprint(v)
}

// timeValue formats a time as RFC 3339 in UTC; a DATE column's midnight
// value as the bare date, as PostgreSQL's date type is returned.
func timeValue(k kind, t time.Time) string {
	t = t.UTC()
	if k == kindDate && t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
		return t.Format(time.DateOnly)
	}
	return t.Format(time.RFC3339Nano)
}
