package script

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"time"

	"github.com/dop251/goja"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Values cross the boundary as plain JSON-like data, never as wrapped Go
// objects (goja's ToValue wraps maps and slices, whose behaviour differs
// from real JavaScript objects):
//
//	Go → JS: nil → null; bool; string; int64 and json.Number integers →
//	number when |n| ≤ 2^53, else BigInt (exact); float64 and other
//	json.Number → number, or a string when a float64 would lose digits;
//	time.Time → RFC 3339 string; []byte → base64 string;
//	json.RawMessage → parsed; *pipeline.Rows → array of objects in column
//	order; maps → objects (keys sorted); slices → arrays.
//	JS → Go: JSON semantics (toJSON honoured, so a Date becomes its ISO
//	string; undefined and functions dropped), plus BigInt → a JSON number
//	with every digit.

const maxDepth = 100

const maxSafeInt = 1 << 53

// converter builds JavaScript values while counting the size the data
// would have as JSON, so an oversized input fails before it is built.
type converter struct {
	vm    *goja.Runtime
	left  int
	limit int
}

func (r *runner) toJS(v any, limit int) (goja.Value, error) {
	c := &converter{vm: r.vm, left: limit, limit: limit}
	return c.value(v, 0)
}

func (c *converter) spend(n int) error {
	c.left -= n
	if c.left < 0 {
		return &Error{Kind: KindTooLarge, Message: fmt.Sprintf("input to the script is larger than %s (script input limit)", pipeline.SizeText(int64(c.limit)))}
	}
	return nil
}

func (c *converter) value(v any, depth int) (goja.Value, error) {
	if depth > maxDepth {
		return nil, &Error{Kind: KindBadValue, Message: fmt.Sprintf("input nested deeper than %d levels", maxDepth)}
	}
	switch x := v.(type) {
	case nil:
		return goja.Null(), c.spend(4)
	case bool:
		return c.vm.ToValue(x), c.spend(5)
	case string:
		return c.vm.ToValue(x), c.spend(len(x) + 2)
	case int:
		return c.integer(int64(x))
	case int32:
		return c.integer(int64(x))
	case int64:
		return c.integer(x)
	case uint64:
		if x > math.MaxInt64 {
			return c.vm.ToValue(new(big.Int).SetUint64(x)), c.spend(20)
		}
		return c.integer(int64(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return goja.Null(), c.spend(4)
		}
		return c.vm.ToValue(x), c.spend(24)
	case float32:
		return c.value(float64(x), depth)
	case json.Number:
		return c.number(x)
	case json.RawMessage:
		if err := c.spend(len(x)); err != nil {
			return nil, err
		}
		c.left += len(x) // counted again while converting the parsed value
		parsed, err := decodeJSON(x)
		if err != nil {
			return nil, &Error{Kind: KindBadValue, Message: "invalid JSON in input"}
		}
		return c.value(parsed, depth)
	case time.Time:
		return c.value(x.Format(time.RFC3339Nano), depth)
	case []byte:
		return c.value(base64.StdEncoding.EncodeToString(x), depth)
	case *pipeline.Rows:
		return c.rows(x, depth)
	case []any:
		items := make([]any, len(x))
		for i, e := range x {
			jv, err := c.value(e, depth+1)
			if err != nil {
				return nil, err
			}
			items[i] = jv
		}
		return c.vm.NewArray(items...), c.spend(len(x) + 2)
	case map[string]any:
		var small [8]string // a payload's or an input object's keys: no allocation
		keys := small[:0]
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		obj := c.vm.NewObject()
		for _, k := range keys {
			jv, err := c.value(x[k], depth+1)
			if err != nil {
				return nil, err
			}
			if err := c.spend(len(k) + 4); err != nil {
				return nil, err
			}
			c.set(obj, k, jv)
		}
		return obj, c.spend(2)
	case []map[string]any:
		items := make([]any, len(x))
		for i, m := range x {
			items[i] = m
		}
		return c.value(items, depth)
	}
	// Anything else (a struct, a typed slice) goes through its JSON form:
	// the script sees data, never a Go object.
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && rv.IsNil() {
		return goja.Null(), c.spend(4)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, &Error{Kind: KindBadValue, Message: fmt.Sprintf("a %T cannot be passed to a script", v)}
	}
	return c.value(json.RawMessage(b), depth)
}

// set gives obj the own property k, as JSON.parse does: a "__proto__"
// key is data, never the object's prototype (obj.Set would call the
// inherited __proto__ setter).
func (c *converter) set(obj *goja.Object, k string, v goja.Value) {
	if k == "__proto__" {
		_ = obj.DefineDataProperty(k, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
		return
	}
	_ = obj.Set(k, v)
}

func (c *converter) integer(n int64) (goja.Value, error) {
	if n > maxSafeInt || n < -maxSafeInt {
		return c.vm.ToValue(big.NewInt(n)), c.spend(20)
	}
	return c.vm.ToValue(n), c.spend(20)
}

// number converts a JSON number literal without losing precision.
func (c *converter) number(n json.Number) (goja.Value, error) {
	s := string(n)
	if err := c.spend(len(s)); err != nil {
		return nil, err
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return c.integer(i)
	}
	if b, ok := new(big.Int).SetString(s, 10); ok {
		return c.vm.ToValue(b), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return c.vm.ToValue(s), nil
	}
	// Exact when the shortest decimal form of the double is the same
	// number as the literal (0.1 is; 1234567890123456789012.5 is not).
	exact, ok := new(big.Rat).SetString(s)
	short, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if ok && exact.Cmp(short) != 0 {
		// e.g. numeric 1234567890123456789012.5: a double would round.
		return c.vm.ToValue(s), nil
	}
	return c.vm.ToValue(f), nil
}

// rows is an array of objects whose keys keep the statement's column order.
func (c *converter) rows(r *pipeline.Rows, depth int) (goja.Value, error) {
	if r == nil {
		return c.vm.NewArray(), nil
	}
	items := make([]any, len(r.Values))
	for i, row := range r.Values {
		obj := c.vm.NewObject()
		for j, v := range row {
			jv, err := c.value(v, depth+2)
			if err != nil {
				return nil, err
			}
			if err := c.spend(len(r.Columns[j]) + 4); err != nil {
				return nil, err
			}
			c.set(obj, r.Columns[j], jv)
		}
		items[i] = obj
	}
	return c.vm.NewArray(items...), c.spend(len(r.Values) + 2)
}

// decodeJSON decodes JSON into generic values, numbers as json.Number.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// encoder writes a JavaScript value as JSON, stopping at the size cap
// before it allocates past it.
type encoder struct {
	r     *runner
	buf   []byte
	limit int
}

func (r *runner) toJSON(v goja.Value, limit int) (json.RawMessage, error) {
	e := &encoder{r: r, limit: limit}
	if err := e.value(v, 0, false); err != nil {
		return nil, err
	}
	if e.buf == nil {
		e.buf = []byte("null")
	}
	return e.buf, nil
}

func (e *encoder) tooLarge() error {
	return &Error{Kind: KindTooLarge, Message: fmt.Sprintf("the script's result is larger than %s (script output limit)", pipeline.SizeText(int64(e.limit)))}
}

func (e *encoder) grow(n int) error {
	if len(e.buf)+n > e.limit {
		return e.tooLarge()
	}
	return nil
}

// skippable reports values JSON.stringify leaves out of objects.
func skippable(v goja.Value) bool {
	if v == nil || goja.IsUndefined(v) {
		return true
	}
	if _, ok := goja.AssertFunction(v); ok {
		return true
	}
	_, sym := v.(*goja.Symbol)
	return sym
}

func (e *encoder) value(v goja.Value, depth int, inArray bool) error {
	if depth > maxDepth {
		return &Error{Kind: KindBadValue, Message: fmt.Sprintf("the script's result is nested deeper than %d levels (a cycle?)", maxDepth)}
	}
	if skippable(v) || goja.IsNull(v) {
		if err := e.grow(4); err != nil {
			return err
		}
		e.buf = append(e.buf, "null"...)
		return nil
	}
	obj, isObj := v.(*goja.Object)
	if !isObj {
		return e.primitive(v)
	}
	if toJSON, ok := goja.AssertFunction(obj.Get("toJSON")); ok {
		out, err := toJSON(obj)
		if err != nil {
			return err
		}
		if _, still := out.(*goja.Object); still && out.(*goja.Object) == obj {
			return &Error{Kind: KindBadValue, Message: "toJSON returned its own object"}
		}
		return e.value(out, depth+1, inArray)
	}
	switch obj.ClassName() {
	case "Array":
		n := obj.Get("length").ToInteger()
		if err := e.grow(int(min(n, int64(e.limit))) + 2); err != nil {
			return err
		}
		e.buf = append(e.buf, '[')
		for i := int64(0); i < n; i++ {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.value(obj.Get(strconv.FormatInt(i, 10)), depth+1, true); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
		return nil
	case "Number":
		return e.primitive(obj.ToNumber())
	case "String":
		return e.primitive(obj.ToString())
	}
	if err := e.grow(2); err != nil {
		return err
	}
	e.buf = append(e.buf, '{')
	first := true
	for _, k := range obj.Keys() {
		pv := obj.Get(k)
		if skippable(pv) {
			continue
		}
		if !first {
			e.buf = append(e.buf, ',')
		}
		first = false
		if err := e.grow(len(k) + 3); err != nil {
			return err
		}
		e.buf = pipeline.AppendJSONString(e.buf, k, false)
		e.buf = append(e.buf, ':')
		if err := e.value(pv, depth+1, false); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

func (e *encoder) primitive(v goja.Value) error {
	if str, ok := v.(goja.String); ok && len(e.buf)+str.Length() > e.limit {
		// Refused before Export copies it: UTF-8 is never shorter than
		// the UTF-16 length.
		return e.tooLarge()
	}
	switch x := v.Export().(type) {
	case bool:
		if err := e.grow(5); err != nil {
			return err
		}
		e.buf = strconv.AppendBool(e.buf, x)
	case int64:
		if err := e.grow(20); err != nil {
			return err
		}
		e.buf = strconv.AppendInt(e.buf, x, 10)
	case float64:
		if err := e.grow(25); err != nil {
			return err
		}
		e.buf = appendFloat(e.buf, x)
	case *big.Int:
		s := x.String()
		if err := e.grow(len(s)); err != nil {
			return err
		}
		e.buf = append(e.buf, s...)
	case string:
		if err := e.grow(len(x) + 2); err != nil {
			return err
		}
		e.buf = pipeline.AppendJSONString(e.buf, x, false)
		if len(e.buf) > e.limit {
			return e.tooLarge()
		}
	default:
		if err := e.grow(4); err != nil {
			return err
		}
		e.buf = append(e.buf, "null"...)
	}
	return nil
}

// appendFloat formats like JSON.stringify (and encoding/json): NaN and
// infinities are null.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == 0 {
		return append(b, '0') // -0 too, as JSON.stringify writes it
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'e', -1, 64)
	// JavaScript writes 1e-7, not Go's 1e-07.
	if n := len(b); n-start >= 4 && b[n-4] == 'e' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}
