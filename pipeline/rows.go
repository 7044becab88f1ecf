package pipeline

import (
	"bytes"
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
	keys := make([][]byte, len(r.Columns))
	for i, c := range r.Columns {
		k, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, row := range r.Values {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteByte('{')
		for j, v := range row {
			if j > 0 {
				buf.WriteByte(',')
			}
			buf.Write(keys[j])
			buf.WriteByte(':')
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			buf.Write(b)
		}
		buf.WriteByte('}')
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
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
