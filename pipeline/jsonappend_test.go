package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// jsonAppendValues are values AppendJSON must write as json.Marshal does,
// among them every string form it leaves to json.Marshal.
var jsonAppendValues = []any{
	nil, true, false, int64(0), int64(-42), int64(math.MaxInt64), int64(math.MinInt64), 7,
	"", "plain", `quote " and \ backslash`, "<b>&amp;</b>", "tab\tnewline\n\x00\x1f\x7f\b\f\r",
	"é ü 日本 😀", "\u2028 and \u2029", "bad \xff utf-8", "\xe2\x80", "ends in \xc3",
	1.5, float64(1e21), -0.0, json.Number("12.50"), json.RawMessage(` {"a" : [1, "<"]} `),
	[]any{"a", nil, int64(1)}, map[string]any{"z": 1, "a": "<"},
}

func TestAppendJSON(t *testing.T) {
	for _, v := range jsonAppendValues {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendJSON([]byte("prefix"), v)
		if err != nil || string(got) != "prefix"+string(want) {
			t.Errorf("AppendJSON(%#v) = %s, %v; want prefix%s", v, got, err, want)
		}
	}
	if _, err := AppendJSON(nil, math.Inf(1)); err == nil {
		t.Error("AppendJSON(+Inf): no error")
	}
}

// TestRowsMarshalJSON: the rows as json.Marshal writes an array of
// ordered objects, and EncodeValue's bytes are json.Marshal's.
func TestRowsMarshalJSON(t *testing.T) {
	rows := &Rows{Columns: []string{"id", "na<me", "é"}, Values: [][]any{}}
	for i, v := range jsonAppendValues {
		rows.Values = append(rows.Values, []any{int64(i), v, "x"})
	}
	got, err := EncodeValue(rows)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("EncodeValue:\n got %s\nwant %s", got, want)
	}
	var back []map[string]any
	if err := json.Unmarshal(got, &back); err != nil || len(back) != len(jsonAppendValues) || back[3]["na<me"] != float64(0) {
		t.Errorf("not the rows: %v %v", err, back)
	}
	for _, v := range []any{(*Rows)(nil), &Rows{}, map[string]any{"a": 1}} {
		got, _ := EncodeValue(v)
		want, _ := json.Marshal(v)
		if !bytes.Equal(got, want) {
			t.Errorf("EncodeValue(%#v) = %s, want %s", v, got, want)
		}
	}
	if _, err := EncodeValue(&Rows{Columns: []string{"f"}, Values: [][]any{{math.NaN()}}}); err == nil {
		t.Error("NaN encoded")
	}
}

// FuzzAppendJSONString: any string is written as json.Marshal writes it
// and, without HTML escaping, as an Encoder with SetEscapeHTML(false) does.
func FuzzAppendJSONString(f *testing.F) {
	for _, v := range jsonAppendValues {
		if s, ok := v.(string); ok {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendJSONString(nil, s, true); !bytes.Equal(got, want) {
			t.Errorf("AppendJSONString(%q, true) = %s, want %s", s, got, want)
		}
		var plain bytes.Buffer
		enc := json.NewEncoder(&plain)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		if got, want := AppendJSONString(nil, s, false), bytes.TrimSuffix(plain.Bytes(), []byte("\n")); !bytes.Equal(got, want) {
			t.Errorf("AppendJSONString(%q, false) = %s, want %s", s, got, want)
		}
	})
}

// TestDBCacheKeyFormat: a DB tool's cache key is the rendered statement,
// a zero byte and its values as json.Marshal writes them. Keys are shared
// through Redis between nodes and versions: this form must not change.
func TestDBCacheKeyFormat(t *testing.T) {
	declared := map[string]sqltemplate.Param{"a": {}, "b": {}, "c": {}, "f": {}}
	for _, tc := range []struct {
		src    string
		inputs map[string]any
	}{
		{"SELECT * FROM t WHERE a = {{ inputs.a }} AND b = {{ inputs.b }} AND c = {{ inputs.c }}",
			map[string]any{"a": "x<\"y\"é", "b": int64(-3), "c": 1.25}},
		{"SELECT {{ inputs.a }}", map[string]any{"a": nil}},
		{"SELECT 1", nil},
	} {
		st, err := sqltemplate.Compile(tc.src, sqltemplate.Options{Dialect: sqltemplate.Postgres, Inputs: declared})
		if err != nil {
			t.Fatal(err)
		}
		d := &DBExecutor{Statement: st}
		got, err := d.CacheKey(context.Background(), &Call{Inputs: tc.inputs})
		if err != nil {
			t.Fatal(err)
		}
		sql, args, _ := st.RenderAs(tc.inputs, TemplateIdentity(nil))
		vals, _ := json.Marshal(args)
		if want := sql + "\x00" + string(vals); string(got) != want {
			t.Errorf("%s: key %q, want %q", tc.src, got, want)
		}
	}
	st, _ := sqltemplate.Compile("SELECT {{ inputs.f }}", sqltemplate.Options{Dialect: sqltemplate.Postgres, Inputs: declared})
	if key, err := (&DBExecutor{Statement: st}).CacheKey(context.Background(), &Call{Inputs: map[string]any{"f": math.NaN()}}); key != nil || err != nil {
		t.Errorf("NaN: key %q, %v; want none (run uncached)", key, err)
	}
}
