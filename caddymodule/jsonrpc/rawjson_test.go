package jsonrpc

import (
	"bytes"
	"encoding/json"
	"reflect"
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

// TestMembersScansAsDecoderDoes: Members, which scans without decoding,
// gives the keys and value ranges encoding/json's decoder gives, for every
// kind of value, escapes and white space; what is not a valid object is
// refused.
func TestMembersScansAsDecoderDoes(t *testing.T) {
	for _, obj := range []string{
		`{}`, ` { } `, `{"a":1}`, "{\n \"a\" :\t-1.5e3 ,\r\n\"b\":[1,[2,{}],\"]\"] }\n",
		`{"q\"k":"v\\","\u0061":{"x":"}","y":[]},"t":true,"f":false,"n":null}`,
		`{"s":"\\\"","o":{"a":{"b":{"c":"{["}}},"e":"é\u2028<"}`,
		`{"content":[{"type":"text","text":"hi"}],"_meta":{"k":"v"},"isError":false}`,
	} {
		got, err := scanned([]byte(obj))
		if err != nil {
			t.Errorf("%s: %v", obj, err)
			continue
		}
		if want := decoded([]byte(obj)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got  %v\n want %v", obj, got, want)
		}
	}
	for _, bad := range []string{``, `[]`, `"x"`, `{"a":}`, `{"a":1,}`, `{"a":tru}`, `{"a":1} x`, `{"a"`, `{"a":01}`} {
		if err := Members([]byte(bad), func(string, int, int) bool { return true }); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

type member struct {
	key        string
	start, end int
}

func scanned(obj []byte) ([]member, error) {
	var out []member
	err := Members(obj, func(key string, start, end int) bool {
		out = append(out, member{key, start, end})
		return true
	})
	return out, err
}

// decoded is what Members gave when it was written with encoding/json's
// decoder: the reference it is held to.
func decoded(obj []byte) []member {
	var out []member
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		tok, _ := dec.Token()
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		end := int(dec.InputOffset())
		out = append(out, member{tok.(string), end - len(v), end})
	}
	return out
}

// FuzzMembers: on any valid JSON object Members agrees with the decoder;
// anything else it refuses.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":"}"}],"c":"\\\""}`, ` {"\u0061" : null } `, `[1]`, `{"a":1}x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, obj []byte) {
		got, err := scanned(obj)
		trimmed := bytes.TrimSpace(obj)
		isObject := json.Valid(obj) && len(trimmed) > 0 && trimmed[0] == '{'
		if (err == nil) != isObject {
			t.Fatalf("%q: error %v, valid object %v", obj, err, isObject)
		}
		if err == nil && !reflect.DeepEqual(got, decoded(obj)) {
			t.Fatalf("%q:\n got  %v\n want %v", obj, got, decoded(obj))
		}
	})
}
