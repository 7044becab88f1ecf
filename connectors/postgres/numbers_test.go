package postgres

import (
	"math"
	"testing"
)

func TestFitsFloat64(t *testing.T) {
	cases := []struct {
		s    string
		want bool
	}{
		{"0", true},
		{"1.50", true},
		{"0.1", true},
		{"-0.000123", true},
		{"123456789012345", true},        // 15 digits
		{"9007199254740992", true},       // 2^53
		{"9007199254740993", false},      // 2^53 + 1
		{"1000000000000000000000", true}, // 1e21: one significant digit
		{"0.30000000000000004", true},    // a float64's shortest form
		{"0.3000000000000000444", false}, // more than the float64 says
		{"123456789012345678901234567890", false},
	}
	for _, tc := range cases {
		if got := fitsFloat64(tc.s); got != tc.want {
			t.Errorf("fitsFloat64(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestNumberEdges(t *testing.T) {
	cases := []struct {
		name      string
		got, want any
	}{
		{"int8 2^53", int8Value(1 << 53), int64(1 << 53)},
		{"int8 -2^53-1", int8Value(-(1 << 53) - 1), "-9007199254740993"},
		{"int8 max", int8Value(math.MaxInt64), "9223372036854775807"},
		{"float4 0.1", float4Value(0.1), 0.1},
		{"float4 NaN", float4Value(float32(math.NaN())), "NaN"},
		{"float8 -Inf", float8Value(math.Inf(-1)), "-Infinity"},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: got %#v, want %#v", tc.name, tc.got, tc.want)
		}
	}
}
