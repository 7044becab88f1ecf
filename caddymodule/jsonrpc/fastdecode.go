package jsonrpc

import (
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// fastDecodeCall reads the common shape of a JSON-RPC request without
// encoding/json's reflection: DecodeCall cost a cache hit about 3 µs and
// two dozen allocations of its ~50 µs (docs/benchmarks.md, "Limits, cost per call,
// scale and overload"). It handles only what it can read exactly as
// encoding/json with UseNumber would: known keys spelled exactly, once
// each; strings without escapes; ids that are numbers or strings. For
// anything else it reports false and DecodeCall reads the body with
// encoding/json, which decides. When it reports true, msg is what
// encoding/json gives and the body is one JSON value whose arguments are
// an object, null or absent (FuzzDecodeCall compares the two).
func fastDecodeCall(body []byte, msg *CallMessage[map[string]any]) bool {
	d := fastDecoder{b: body}
	if !d.object(func(key string) bool {
		switch key {
		case "jsonrpc":
			return d.plainString(&msg.JSONRPC)
		case "id":
			start := d.ws()
			if d.i < len(d.b) && d.b[d.i] == '"' {
				var s string
				if !d.plainString(&s) {
					return false
				}
			} else if !d.number() {
				return false
			}
			msg.ID = json.RawMessage(d.b[start:d.i])
			return true
		case "method":
			return d.plainString(&msg.Method)
		case "params":
			return d.object(func(key string) bool {
				switch key {
				case "name":
					return d.plainString(&msg.Params.Name)
				case "arguments":
					if d.literal("null") {
						return true
					}
					v, ok := d.value(0)
					m, isObject := v.(map[string]any)
					msg.Params.Arguments = m
					return ok && isObject
				case "_meta":
					start := d.ws()
					if !d.skip(0) {
						return false
					}
					msg.Params.Meta = json.RawMessage(d.b[start:d.i])
					return true
				}
				return false // inputResponses, requestState, task, or unknown
			})
		}
		return false
	}) {
		return false
	}
	d.ws()
	return d.i == len(d.b)
}

// maxFastDepth bounds nesting in the arguments; deeper is left to
// encoding/json.
const maxFastDepth = 32

type fastDecoder struct {
	b []byte
	i int
}

// ws skips white space and returns the position.
func (d *fastDecoder) ws() int {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\r', '\n':
			d.i++
		default:
			return d.i
		}
	}
	return d.i
}

// object reads an object, calling member for each key (d then at its
// value, which member reads); a key seen twice is refused. It is sequence
// with the key read here rather than in a closure: every request reads
// three objects, and a closure each would cost an allocation each.
func (d *fastDecoder) object(member func(key string) bool) bool {
	if empty, ok := d.open('{', '}'); empty || !ok {
		return ok
	}
	var seen [16]string // the keys of a request's own objects; more are left to encoding/json
	for n := 0; ; n++ {
		var key string
		if n == len(seen) || !d.plainString(&key) || slices.Contains(seen[:n], key) || !d.colon() || !member(key) {
			return false
		}
		seen[n] = key
		if more, ok := d.next('}'); !more || !ok {
			return ok
		}
	}
}

// sequence reads open, items separated by commas, and close.
func (d *fastDecoder) sequence(open, close byte, item func() bool) bool {
	if empty, ok := d.open(open, close); empty || !ok {
		return ok
	}
	for {
		if !item() {
			return false
		}
		if more, ok := d.next(close); !more || !ok {
			return ok
		}
	}
}

// open reads the opening byte of an object or array, and its closing one
// too when it is empty.
func (d *fastDecoder) open(open, close byte) (empty, ok bool) {
	if d.ws(); d.i >= len(d.b) || d.b[d.i] != open {
		return false, false
	}
	d.i++
	if d.ws(); d.i < len(d.b) && d.b[d.i] == close {
		d.i++
		return true, true
	}
	return false, true
}

// next reads what follows an item: a comma (more) or the closing byte.
func (d *fastDecoder) next(close byte) (more, ok bool) {
	if d.ws(); d.i >= len(d.b) {
		return false, false
	}
	switch d.b[d.i] {
	case ',':
		d.i++
		return true, true
	case close:
		d.i++
		return false, true
	}
	return false, false
}

// colon reads the colon after a key.
func (d *fastDecoder) colon() bool {
	if d.ws(); d.i >= len(d.b) || d.b[d.i] != ':' {
		return false
	}
	d.i++
	return true
}

// plainString reads a string without escapes or control characters, in
// valid UTF-8: its decoded value is its bytes.
func (d *fastDecoder) plainString(out *string) bool {
	d.ws()
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return false
	}
	start := d.i + 1
	ascii := true
	for j := start; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			s := d.b[start:j]
			if !ascii && !utf8.Valid(s) {
				return false
			}
			*out = internedString(s)
			d.i = j + 1
			return true
		case c == '\\' || c < 0x20:
			return false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return false
}

// literal reads word (true, false, null) if it is next.
func (d *fastDecoder) literal(word string) bool {
	d.ws()
	if len(d.b)-d.i < len(word) || string(d.b[d.i:d.i+len(word)]) != word {
		return false
	}
	d.i += len(word)
	return true
}

// number reads a number as JSON's grammar has it.
func (d *fastDecoder) number() bool {
	d.ws()
	j := d.i
	if j < len(d.b) && d.b[j] == '-' {
		j++
	}
	digits := func() int {
		n := 0
		for j < len(d.b) && d.b[j] >= '0' && d.b[j] <= '9' {
			j++
			n++
		}
		return n
	}
	switch {
	case j < len(d.b) && d.b[j] == '0':
		j++
	case digits() == 0:
		return false
	}
	if j < len(d.b) && d.b[j] == '.' {
		j++
		if digits() == 0 {
			return false
		}
	}
	if j < len(d.b) && (d.b[j] == 'e' || d.b[j] == 'E') {
		j++
		if j < len(d.b) && (d.b[j] == '+' || d.b[j] == '-') {
			j++
		}
		if digits() == 0 {
			return false
		}
	}
	d.i = j
	return true
}

// value reads any value as encoding/json decodes it into an interface
// with UseNumber.
func (d *fastDecoder) value(depth int) (any, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	d.ws()
	if d.i >= len(d.b) {
		return nil, false
	}
	switch c := d.b[d.i]; {
	case c == '{':
		m := map[string]any{}
		ok := d.object(func(key string) bool {
			v, ok := d.value(depth + 1)
			m[key] = v
			return ok
		})
		return m, ok
	case c == '[':
		list := []any{}
		ok := d.sequence('[', ']', func() bool {
			v, ok := d.value(depth + 1)
			list = append(list, v)
			return ok
		})
		return list, ok
	case c == '"':
		var s string
		if !d.plainString(&s) {
			return nil, false
		}
		return s, true
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	default:
		start := d.i
		if !d.number() {
			return nil, false
		}
		return json.Number(d.b[start:d.i]), true
	}
}

// skip passes over any valid value (escapes and all), for a raw field.
func (d *fastDecoder) skip(depth int) bool {
	if depth > maxFastDepth {
		return false
	}
	d.ws()
	if d.i >= len(d.b) {
		return false
	}
	switch c := d.b[d.i]; {
	case c == '{': // any keys, duplicates included: a raw field keeps them as they are
		return d.sequence('{', '}', func() bool {
			d.ws()
			return d.i < len(d.b) && d.b[d.i] == '"' && d.anyString() && d.colon() && d.skip(depth+1)
		})
	case c == '[':
		return d.sequence('[', ']', func() bool { return d.skip(depth + 1) })
	case c == '"':
		return d.anyString()
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	default:
		return d.number()
	}
}

// anyString passes over a string with valid escapes and no control
// characters (encoding/json's scanner accepts any other byte in it).
func (d *fastDecoder) anyString() bool {
	for j := d.i + 1; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(d.b) {
				return false
			}
			switch d.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(d.b) {
					return false
				}
				for _, h := range d.b[j+1 : j+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}

// internedString is string(s) without the allocation for the strings every
// request carries.
func internedString(s []byte) string {
	switch string(s) { // compared without a conversion
	case "2.0":
		return "2.0"
	case "tools/call":
		return "tools/call"
	case "tools/list":
		return "tools/list"
	}
	return string(s)
}
