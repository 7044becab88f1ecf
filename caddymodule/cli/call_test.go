package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTypedValue(t *testing.T) {
	str := propSchema{Type: "string"}
	integer := propSchema{Type: "integer"}
	for _, tc := range []struct {
		raw  string
		p    propSchema
		want string // JSON of the typed value
	}{
		{"42", str, `"42"`},
		{"true", str, `"true"`},
		{"42", integer, `42`},
		{"12345678901234567890", integer, `12345678901234567890`}, // exact, not a float
		{"4x", integer, `"4x"`},                                   // left for the server to refuse
		{"true", propSchema{Type: "boolean"}, `true`},
		{`[1,2]`, propSchema{Type: "array"}, `[1,2]`},
		{`{"a":1}`, propSchema{Type: []any{"object", "null"}}, `{"a":1}`},
		{"hello", propSchema{}, `"hello"`},
		{"3.5", propSchema{}, `3.5`},
		{`"42"`, propSchema{}, `"42"`},
		{"1 2", propSchema{}, `"1 2"`},
		{"", propSchema{}, `""`},
	} {
		got, _ := json.Marshal(typedValue(tc.raw, tc.p))
		if string(got) != tc.want {
			t.Errorf("typedValue(%q, %v) = %s, want %s", tc.raw, tc.p.Type, got, tc.want)
		}
	}
}

func TestFindRPCError(t *testing.T) {
	for _, tc := range []struct {
		body string
		want *rpcError
	}{
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"input validation: bad"}}` + "\n", &rpcError{-32000, "input validation: bad"}},
		{"event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601,\"message\":\"tool \\\"x\\\" not found\"}}\n\n", &rpcError{-32601, `tool "x" not found`}},
		{`{"jsonrpc":"2.0","id":3,"result":{}}`, nil},
		{"not json", nil},
	} {
		got := findRPCError([]byte(tc.body))
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("findRPCError(%q) = %+v, want %+v", tc.body, got, tc.want)
		}
	}
}

func TestParseCallArguments(t *testing.T) {
	if _, err := parsePairs([]string{"a=1", "b"}); err == nil || !strings.Contains(err.Error(), `"b": want key=value`) {
		t.Errorf("missing '=': %v", err)
	}
	if _, err := parsePairs([]string{"a=1", "a=2"}); err == nil {
		t.Error("a key given twice is accepted")
	}
	if p, err := parsePairs([]string{"q=a=b"}); err != nil || p[0].value != "a=b" {
		t.Errorf("value with '=': %v %v", p, err)
	}
	if h, err := parseHeaders([]string{"x-api-key:  k: v "}); err != nil || h["X-Api-Key"] != "k: v" {
		t.Errorf("header: %v %v", h, err)
	}
	if _, err := parseHeaders([]string{"no colon"}); err == nil {
		t.Error("a header without ':' is accepted")
	}
}
