package pipeline

import (
	"encoding/json"
	"testing"
)

// TestValueSize: what max_result_size counts per normalized value, and
// that counting allocates nothing.
func TestValueSize(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want int64
	}{
		{nil, 16},
		{int64(7), 16},
		{true, 16},
		{"abc", 19},
		{json.RawMessage(`{"a":1}`), 23},
		{json.Number("1.25"), 20},
		{[]any{"ab", nil}, 16 + 18 + 16},
		{map[string]any{"key": "v"}, 16 + 3 + 17},
	} {
		if got := ValueSize(tc.v); got != tc.want {
			t.Errorf("ValueSize(%#v) = %d, want %d", tc.v, got, tc.want)
		}
	}
	v := any([]any{"ab", int64(1), map[string]any{"k": "v"}})
	if n := testing.AllocsPerRun(100, func() { ValueSize(v) }); n != 0 {
		t.Errorf("ValueSize allocates %v times", n)
	}
	for n, want := range map[int64]string{4 << 20: "4 MiB", 512 << 10: "512 KiB", 1000: "1000 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := SizeText(n); got != want {
			t.Errorf("SizeText(%d) = %q, want %q", n, got, want)
		}
	}
}
