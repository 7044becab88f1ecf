package redis

import (
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/edgemcp/edgemcp/pipeline"
)

// budget is what a reply may still hold as it is converted: elements of
// arrays and maps at any depth (max_rows) and bytes (max_result_size,
// counted as pipeline.ValueSize counts them), so that both bound what is
// encoded for the caller.
type budget struct {
	elems   int
	bytes   int64 // left
	maxSize int64
}

// jsonValue converts a go-redis reply (RESP2 or RESP3) to JSON-ready
// values, spending b.
func jsonValue(v any, b *budget) (any, error) {
	b.bytes -= pipeline.ValueOverhead
	if s, ok := v.(string); ok {
		b.bytes -= int64(len(s))
	}
	if b.bytes < 0 {
		return nil, pipeline.ResultTooLarge(b.maxSize)
	}
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
		if err := b.spend(len(v)); err != nil {
			return nil, err
		}
		out := make([]any, len(v))
		for i, e := range v {
			ev, err := jsonValue(e, b)
			if err != nil {
				return nil, err
			}
			out[i] = ev
		}
		return out, nil
	case map[any]any:
		if err := b.spend(len(v)); err != nil {
			return nil, err
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			ks, err := jsonValue(k, b)
			if err != nil {
				return nil, err
			}
			ev, err := jsonValue(e, b)
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

func (b *budget) spend(n int) error {
	b.elems -= n
	if b.elems < 0 {
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
