package jsonrpc

import (
	"testing"
)

// TestWithJSONMember: a member's value is replaced where it stands, or the
// member is added at the end; everything else keeps its bytes (white
// space, key order, escapes, fields nobody models).
func TestWithJSONMember(t *testing.T) {
	for _, c := range []struct{ in, key, val, want string }{
		{`{"name":"a","x":{"y":[1, 2]}}`, "name", `"ns_a"`, `{"name":"ns_a","x":{"y":[1, 2]}}`},
		{` { "x" : 1 , "name" : "a" } `, "name", `"b"`, ` { "x" : 1 , "name" : "b" } `},
		{`{"x":"\u003c"}`, "name", `"n"`, `{"x":"\u003c","name":"n"}`},
		{`{}`, "name", `"n"`, `{"name":"n"}`},
		{`{ }`, "name", `"n"`, `{"name":"n"}`},
		{`{"name":123.50e1,"z":null}`, "name", `"n"`, `{"name":"n","z":null}`},
	} {
		got, err := WithMember([]byte(c.in), c.key, []byte(c.val))
		if err != nil || string(got) != c.want {
			t.Errorf("WithMember(%s, %s, %s) = %s, %v; want %s", c.in, c.key, c.val, got, err, c.want)
		}
	}
	if _, err := WithMember([]byte(`[1]`), "a", []byte(`1`)); err == nil {
		t.Error("an array is not an object")
	}
}

// TestMergeResult: the upstream's result stays as it was sent; what
// mcp-go's encoding adds (on 2026-07-28, resultType and the server's
// _meta) joins it, and nothing of mcp-go's replaces the upstream's.
func TestMergeResult(t *testing.T) {
	for _, c := range []struct{ up, ours, want string }{
		{`{"completion":{"values":["a"],"total":1,"hasMore":false}}`, `{"completion":{"values":["a"],"total":1}}`,
			`{"completion":{"values":["a"],"total":1,"hasMore":false}}`},
		{`{"_meta":{"a":1},"contents":[]}`, `{"contents":[],"resultType":"complete","_meta":{"io.x/server":{"n":1},"a":2}}`,
			`{"_meta":{"a":1,"io.x/server":{"n":1}},"contents":[],"resultType":"complete"}`},
		{`{"contents":[]}`, `{"_meta":{"s":1},"contents":[]}`, `{"contents":[],"_meta":{"s":1}}`},
	} {
		got, err := MergeResult([]byte(c.up), []byte(c.ours))
		if err != nil || string(got) != c.want {
			t.Errorf("MergeResult(%s, %s) = %s, %v; want %s", c.up, c.ours, got, err, c.want)
		}
	}
}
