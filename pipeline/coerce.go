package pipeline

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// coerce converts one JSON-decoded value to the Go value bound for type t.
// It accepts what JSON decoders produce (float64, json.Number, string, bool,
// []any, map[string]any) and, for scalars, the numeric and boolean strings
// that LLM clients often send ("42", "true"). It never rounds: 42.5 is not an
// integer. The error message is the part after `input "x": `.
func coerce(t Type, v any) (any, error) {
	switch t.Kind {
	case KindString:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case KindInt:
		if n, ok := toInt(v); ok {
			return n, nil
		}
	case KindFloat:
		if f, ok := toFloat(v); ok {
			return f, nil
		}
	case KindBool:
		switch b := v.(type) {
		case bool:
			return b, nil
		case string:
			if p, err := strconv.ParseBool(b); err == nil && (b == "true" || b == "false") {
				return p, nil
			}
		}
	case KindDatetime:
		if s, ok := v.(string); ok {
			if ts, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return ts, nil
			}
		}
	case KindObject:
		if m, ok := v.(map[string]any); ok {
			return m, nil
		}
	case KindArray:
		if a, ok := v.([]any); ok {
			return coerceArray(*t.Elem, a)
		}
	}
	return nil, fmt.Errorf("expected %s, got %s", t.jsonTypeName(), describe(v))
}

// coerceArray builds a typed slice ([]int64, []string ...) so that drivers
// bind it as a typed array parameter.
func coerceArray(elem Type, a []any) (any, error) {
	at := func(i int, err error) error { return fmt.Errorf("[%d]: %w", i, err) }
	switch elem.Kind {
	case KindString:
		return typedSlice[string](elem, a, at)
	case KindInt:
		return typedSlice[int64](elem, a, at)
	case KindFloat:
		return typedSlice[float64](elem, a, at)
	case KindBool:
		return typedSlice[bool](elem, a, at)
	case KindDatetime:
		return typedSlice[time.Time](elem, a, at)
	case KindObject:
		return typedSlice[map[string]any](elem, a, at)
	}
	return typedSlice[any](elem, a, at)
}

func typedSlice[T any](elem Type, a []any, at func(int, error) error) ([]T, error) {
	out := make([]T, len(a))
	for i, v := range a {
		if v == nil {
			return nil, at(i, fmt.Errorf("expected %s, got null", elem.jsonTypeName()))
		}
		c, err := coerce(elem, v)
		if err != nil {
			return nil, at(i, err)
		}
		out[i] = c.(T)
	}
	return out, nil
}

func toInt(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		if n == math.Trunc(n) && n >= -(1<<63) && n < 1<<63 {
			return int64(n), true
		}
	case int:
		return int64(n), true
	case int64:
		return n, true
	case json.Number:
		return parseIntLiteral(string(n))
	case string:
		return parseIntLiteral(strings.TrimSpace(n))
	}
	return 0, false
}

// parseIntLiteral accepts "42" and "42.0" / "4.2e1" when exactly integral.
func parseIntLiteral(s string) (int64, bool) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, true
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil && !math.IsInf(f, 0)
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
	}
	return 0, false
}

// describe names a value in an error message without echoing much of it.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case json.Number:
		return string(x)
	case int, int64:
		return fmt.Sprint(x)
	case string:
		const max = 32
		if len(x) > max {
			return strconv.Quote(x[:max]) + "…"
		}
		return strconv.Quote(x)
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
