package pipeline

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The values a connector returns are written to every answer (twice: in
// the text block and in structuredContent), and encoding/json reached each
// one through reflection: about a tenth of a DB tool's allocations. The
// common ones (nil, bool, int64, strings) are appended here to the very
// bytes json.Marshal makes; anything else is given to json.Marshal.

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
		return AppendJSONString(b, x, true), nil
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, enc...), nil
}

// AppendJSONString appends s as a JSON string exactly as encoding/json
// writes it: '"' and '\' escaped, \b \f \n \r \t short and other control
// characters as \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029
// escaped; with escapeHTML (json.Marshal) '<', '>' and '&' as \u003c,
// \u003e and \u0026, without it (an Encoder with SetEscapeHTML(false)) as
// they are.
func AppendJSONString(b []byte, s string, escapeHTML bool) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0 // s[start:i] is still to be copied
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!escapeHTML || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default: // other control characters, and '<', '>', '&' when escaping HTML
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
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
