package pipeline

import (
	"encoding/json"
	"fmt"
)

// Rows is a query result in column order. Connectors fill Values with
// JSON-ready Go values only (nil, bool, int64, float64, string,
// json.Number, json.RawMessage, []any, map[string]any), having normalized
// driver types (uuid, numeric, timestamps, bytea ...) already, so that the
// pipeline never sees a driver type.
type Rows struct {
	Columns []string
	Values  [][]any
}

// MarshalJSON writes the rows as an array of objects whose keys keep the
// column order of the statement (a map would sort them).
func (r *Rows) MarshalJSON() ([]byte, error) {
	if r == nil {
		return []byte("[]"), nil
	}
	keys := make([]byte, 0, 16*len(r.Columns))
	ends := make([]int, len(r.Columns)) // keys[ends[j-1]:ends[j]] is column j's, with its ':'
	for i, c := range r.Columns {
		keys = append(AppendJSONString(keys, c, true), ':')
		ends[i] = len(keys)
	}
	buf := make([]byte, 0, 2+len(r.Values)*(len(keys)+8*len(r.Columns)+2))
	buf = append(buf, '[')
	for i, row := range r.Values {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '{')
		for j, v := range row {
			if j > 0 {
				buf = append(buf, ',')
			}
			from := 0
			if j > 0 {
				from = ends[j-1]
			}
			buf = append(buf, keys[from:ends[j]]...)
			var err error
			if buf, err = AppendJSON(buf, v); err != nil {
				return nil, err
			}
		}
		buf = append(buf, '}')
	}
	return append(buf, ']'), nil
}

// Maps returns the rows as plain maps, for consumers (scripts) that want
// generic values rather than an ordered encoding.
func (r *Rows) Maps() []map[string]any {
	out := make([]map[string]any, len(r.Values))
	for i, row := range r.Values {
		m := make(map[string]any, len(r.Columns))
		for j, v := range row {
			m[r.Columns[j]] = v
		}
		out[i] = m
	}
	return out
}

// DefaultMaxRows bounds a result when a connector sets no max_rows: a
// statement that forgot its LIMIT must not exhaust the gateway's memory.
const DefaultMaxRows = 10000

// TooManyRows is the error a connector returns when a statement yields more
// rows than its max_rows allows.
func TooManyRows(max int) error {
	return &PublicError{Public: fmt.Sprintf("the statement returned more than %d rows (max_rows); add a LIMIT or raise max_rows", max)}
}

// DefaultMaxResultSize bounds a result's size when a connector sets no
// max_result_size (README "Connectors"). 4 MiB counted is about a million
// tokens of text, more than an agent reads in one answer, and four times
// what the bigresult bench's 10,000 ordinary rows count; the heap a call
// holds while it builds and encodes a result was about 14 times the
// counted size there, so this keeps a call near 60 MiB at worst.
const DefaultMaxResultSize = 4 << 20

// ValueOverhead is what each value of a result counts toward
// max_result_size besides its own bytes (the interface slot it takes), so
// that a result of many small values is counted too.
const ValueOverhead = 16

// ResultTooLarge is the error a connector returns when the result it is
// collecting counts more than max bytes (max_result_size). It names the
// limit only, never a value.
func ResultTooLarge(max int64) error {
	return &PublicError{Public: fmt.Sprintf("the result is larger than %s (max_result_size); narrow the statement (fewer rows, columns or elements) or raise max_result_size", SizeText(max))}
}

// ValueSize is what a normalized value counts toward max_result_size:
// the bytes of a string, JSON text or number text, the sum of its
// elements for an array or object, nothing else for a number, bool or
// null; plus ValueOverhead. No allocation.
func ValueSize(v any) int64 {
	n := int64(ValueOverhead)
	switch v := v.(type) {
	case string:
		n += int64(len(v))
	case json.RawMessage:
		n += int64(len(v))
	case json.Number:
		n += int64(len(v))
	case []any:
		for _, e := range v {
			n += ValueSize(e)
		}
	case map[string]any:
		for k, e := range v {
			n += int64(len(k)) + ValueSize(e)
		}
	}
	return n
}

// SizeText writes a byte count for a message: "16 MiB", "512 KiB", or
// "1000 bytes" when it is not a whole number of either.
func SizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
