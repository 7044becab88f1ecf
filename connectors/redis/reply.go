package redis

import (
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/edgemcp/edgemcp/pipeline"
)

// jsonValue converts a go-redis reply (RESP2 or RESP3) to JSON-ready
// values. budget counts the elements of arrays and maps at any depth, so
// that max_rows bounds what is encoded for the caller.
func jsonValue(v any, budget *int) (any, error) {
	switch v := v.(type) {
	case nil, string, bool:
		return v, nil
	case int64:
		return pipeline.SafeInt(v), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return strconv.FormatFloat(v, 'g', -1, 64), nil // "NaN", "+Inf", "-Inf"
		}
		return v, nil
	case *big.Int:
		return v.String(), nil
	case []any:
		if err := spend(budget, len(v)); err != nil {
			return nil, err
		}
		out := make([]any, len(v))
		for i, e := range v {
			ev, err := jsonValue(e, budget)
			if err != nil {
				return nil, err
			}
			out[i] = ev
		}
		return out, nil
	case map[any]any:
		if err := spend(budget, len(v)); err != nil {
			return nil, err
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			ks, err := jsonValue(k, budget)
			if err != nil {
				return nil, err
			}
			ev, err := jsonValue(e, budget)
			if err != nil {
				return nil, err
			}
			out[keyString(ks)] = ev
		}
		return out, nil
	case error: // an error nested in an array reply: part of the result
		text, _ := errorText(v)
		return map[string]any{"error": text}, nil
	}
	return fmt.Sprint(v), nil
}

func spend(budget *int, n int) error {
	*budget -= n
	if *budget < 0 {
		return &pipeline.PublicError{Public: "the reply has more elements than max_rows allows; narrow the command (COUNT, LIMIT, a smaller range) or raise max_rows"}
	}
	return nil
}

// keyString writes a map key as a JSON object key.
func keyString(k any) string {
	switch k := k.(type) {
	case string:
		return k
	case nil:
		return ""
	}
	return fmt.Sprint(k)
}
