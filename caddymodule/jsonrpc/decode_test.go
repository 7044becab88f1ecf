package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// referenceDecodeCall is DecodeCall with encoding/json alone.
func referenceDecodeCall(body []byte) (CallMessage[map[string]any], bool) {
	var msg CallMessage[map[string]any]
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&msg) != nil {
		return msg, false
	}
	return msg, len(bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")) == 0
}

var decodeCallSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-user","arguments":{"id":7}}}`,
	`{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"x","arguments":{"s":"é","n":-1.5e3,"b":true,"z":null,"l":[1,"2",{"k":[]}],"o":{}}}}`,
	` { "jsonrpc" : "2.0" , "id" : 0 , "method" : "tools/call" , "params" : { "name" : "x" , "arguments" : null } } `,
	`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","a":"\u00e9\n","b":[1,{"c":null}]}}}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1,"a":2}}}`,
	`{"jsonrpc":"2.0","id":1,"Method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x\"y","arguments":{"s":"\ud800"}}}`,
	`{"jsonrpc":"2.0","id":01,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"x"} {}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[1]}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","requestState":"s"}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\"}}",
	`{"id":1e999,"method":"tools/call"}`, `{"id":-0.0e-0}`, `{"id":-}`, `{"id":1.}`, `{`, ``,
}

// TestFastDecodeCall: on the common shape the fast reader gives what
// encoding/json gives; on the rest it gives up.
func TestFastDecodeCall(t *testing.T) {
	handled := 0
	for _, s := range decodeCallSeeds {
		var msg CallMessage[map[string]any]
		if fastDecodeCall([]byte(s), &msg) {
			handled++
			want, ok := referenceDecodeCall([]byte(s))
			if !ok || !reflect.DeepEqual(msg, want) {
				t.Errorf("%s:\n fast      %#v\n reference %#v (%v)", s, msg, want, ok)
			}
		}
	}
	if handled != 7 { // the first five, and the two ids 1e999 and -0.0e-0
		t.Errorf("the fast reader handled %d of the seeds, want 7", handled)
	}
}

// FuzzDecodeCall: whenever the fast reader answers, encoding/json agrees
// with it exactly; and DecodeCall always answers as encoding/json does.
func FuzzDecodeCall(f *testing.F) {
	for _, s := range decodeCallSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		want, wantOK := referenceDecodeCall([]byte(body))
		var fast CallMessage[map[string]any]
		if fastDecodeCall([]byte(body), &fast) && (!wantOK || !reflect.DeepEqual(fast, want)) {
			t.Fatalf("fast %#v, encoding/json %#v (%v)", fast, want, wantOK)
		}
		var got CallMessage[map[string]any]
		ok := DecodeCall([]byte(body), &got)
		if ok != wantOK || (ok && !reflect.DeepEqual(got, want)) {
			t.Fatalf("DecodeCall %#v (%v), encoding/json %#v (%v)", got, ok, want, wantOK)
		}
	})
}

// BenchmarkDecodeCall: a plain call read by DecodeCall (the fast reader)
// and by encoding/json alone.
func BenchmarkDecodeCall(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get-user","arguments":{"id":7}}}`)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var msg CallMessage[map[string]any]
			if !DecodeCall(body, &msg) {
				b.Fatal("not read")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := referenceDecodeCall(body); !ok {
				b.Fatal("not read")
			}
		}
	})
}

// FuzzDecodeID: the JSON-RPC id as json.Unmarshal decodes it, whatever the
// client sent.
func FuzzDecodeID(f *testing.F) {
	for _, id := range []string{`1`, `-7`, `0`, `-0`, `007`, `123456789012345`, `1234567890123456`, `1e3`, `1.5`,
		`"abc"`, `"a\"b"`, `"é"`, `"\u00e9"`, `""`, `null`, `{}`, `[1]`, `"`, `-`, ``, `true`} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var want any
		if json.Unmarshal([]byte(raw), &want) != nil {
			want = nil
		}
		if got := DecodeID(json.RawMessage(raw)); fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
			t.Errorf("DecodeID(%q) = %#v, want %#v", raw, got, want)
		}
	})
}
