package postgres

import (
	"reflect"
	"testing"
)

func TestTextArrayParser(t *testing.T) {
	str := func(raw []byte) (any, error) { return string(raw), nil }
	cases := []struct {
		in    string
		delim byte
		want  any
	}{
		{`{}`, ',', []any{}},
		{`{a,b}`, ',', []any{"a", "b"}},
		{`{NULL,"NULL",""}`, ',', []any{nil, "NULL", ""}},
		{`{"a,b","c\"d","e\\f"}`, ',', []any{"a,b", `c"d`, `e\f`}},
		{`{{1,2},{3,4}}`, ',', []any{[]any{"1", "2"}, []any{"3", "4"}}},
		{`[0:1]={x,y}`, ',', []any{"x", "y"}},
		{`{(1,1),(0,0);(2,2),(1,1)}`, ';', []any{"(1,1),(0,0)", "(2,2),(1,1)"}},
	}
	for _, tc := range cases {
		got, err := textArrayDecoder(arrayInfo{delim: tc.delim}, str)([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %#v, want %#v", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{``, `{`, `{a`, `{"a`, `{a}x`, `a`, `{{{{{{{1}}}}}}}`} {
		if _, err := textArrayDecoder(arrayInfo{delim: ','}, str)([]byte(bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}
