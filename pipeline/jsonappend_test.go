package pipeline

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// jsonAppendValues are values AppendJSON must write as json.Marshal does,
// among them every string form it leaves to json.Marshal.
var jsonAppendValues = []any{
	nil, true, false, int64(0), int64(-42), int64(math.MaxInt64), int64(math.MinInt64), 7,
	"", "plain", `quote " and \ backslash`, "<b>&amp;</b>", "tab\tnewline\n\x00\x1f\x7f",
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

// FuzzAppendJSONString: any string is written as json.Marshal writes it.
func FuzzAppendJSONString(f *testing.F) {
	for _, v := range jsonAppendValues {
		if s, ok := v.(string); ok {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("AppendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}
