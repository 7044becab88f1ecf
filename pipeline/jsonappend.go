package pipeline

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The values a connector returns are written to every answer (twice: in
// the text block and in structuredContent), and encoding/json reached each
// one through reflection: about a tenth of a DB tool's allocations. The
// common ones (nil, bool, int64, plain strings) are appended here to the
// very bytes json.Marshal makes; anything else is given to json.Marshal.

// AppendJSON appends v's JSON encoding to b, byte for byte what
// json.Marshal(v) gives (compact, HTML-escaped).
func AppendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case string:
		return AppendJSONString(b, x), nil
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, enc...), nil
}

// AppendJSONString appends s as a JSON string, as json.Marshal writes it:
// '"' and '\' escaped, '<', '>' and '&' as \u003c, \u003e and \u0026,
// valid UTF-8 as it is. Control characters, U+2028, U+2029 and invalid
// UTF-8, which json.Marshal writes in forms of its own, are left to it.
func AppendJSONString(b []byte, s string) []byte {
	start := len(b)
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				return appendMarshalled(b[:start], s)
			}
			b = append(b, s[i:i+size]...)
			i += size
			continue
		}
		switch {
		case c < 0x20:
			return appendMarshalled(b[:start], s)
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '<':
			b = append(b, `\u003c`...)
		case c == '>':
			b = append(b, `\u003e`...)
		case c == '&':
			b = append(b, `\u0026`...)
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}

func appendMarshalled(b []byte, s string) []byte {
	enc, _ := json.Marshal(s) // a string always encodes
	return append(b, enc...)
}

// EncodeValue is json.Marshal(v) for a result's Value, without
// encoding/json's second pass over what Rows already wrote compact and
// escaped (the same bytes).
func EncodeValue(v any) ([]byte, error) {
	if r, ok := v.(*Rows); ok && r != nil {
		return r.MarshalJSON()
	}
	return json.Marshal(v)
}
