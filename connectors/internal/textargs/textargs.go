// Package textargs converts the pipeline's bound values for database/sql
// drivers of databases without array or boolean parameters (SQLite,
// MySQL/MariaDB): booleans as 1/0, times as text in UTC in the layout the
// database reads, and slices and maps as JSON text (for json_each(?),
// JSON_TABLE(?) and friends).
package textargs

import (
	"encoding/json"
	"fmt"
	"time"
)

// Convert returns args as the driver should bind them; layout is the time
// format the database reads.
func Convert(args []any, layout string) ([]any, error) {
	out := make([]any, len(args))
	for i, a := range args {
		v, err := convert(a, layout)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		out[i] = v
	}
	return out, nil
}

func convert(a any, layout string) (any, error) {
	switch v := a.(type) {
	case nil, string, int64, float64:
		return v, nil
	case bool:
		if v {
			return int64(1), nil
		}
		return int64(0), nil
	case time.Time:
		return v.UTC().Format(layout), nil
	case []time.Time:
		s := make([]string, len(v))
		for i, t := range v {
			s[i] = t.UTC().Format(layout)
		}
		return jsonText(s)
	case []string, []int64, []float64, []bool, []any, map[string]any:
		return jsonText(v)
	}
	return nil, fmt.Errorf("unsupported type %T", a)
}

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
