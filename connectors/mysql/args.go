package mysql

import (
	"encoding/json"
	"fmt"
	"time"
)

// bindArgs converts the pipeline's argument values to what the driver
// binds: times as 'YYYY-MM-DD HH:MM:SS.ffffff' in UTC (the session's time
// zone, so TIMESTAMP columns store the same instant and DATETIME the UTC
// wall clock), booleans as 1/0, and slices and maps as JSON text (for
// JSON_TABLE(?), JSON_CONTAINS(?) and friends).
func bindArgs(args []any) ([]any, error) {
	out := make([]any, len(args))
	for i, a := range args {
		v, err := bindArg(a)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		out[i] = v
	}
	return out, nil
}

func bindArg(a any) (any, error) {
	switch v := a.(type) {
	case nil, string, int64, float64:
		return v, nil
	case bool:
		if v {
			return int64(1), nil
		}
		return int64(0), nil
	case time.Time:
		return formatTime(v), nil
	case []time.Time:
		s := make([]string, len(v))
		for i, t := range v {
			s[i] = formatTime(t)
		}
		return jsonText(s)
	case []string, []int64, []float64, []bool, []any, map[string]any:
		return jsonText(v)
	}
	return nil, fmt.Errorf("unsupported type %T", a)
}

// mysqlTime is the literal form both servers read for DATETIME and
// TIMESTAMP, with microseconds (the finest precision they store).
const mysqlTime = "2006-01-02 15:04:05.999999"

func formatTime(t time.Time) string { return t.UTC().Format(mysqlTime) }

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
