package cache

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// wrapEncode is a Config.Encode that puts the value inside an object, and
// counts its calls.
func wrapEncode(calls *int) func(json.RawMessage) (json.RawMessage, int, bool) {
	return func(v json.RawMessage) (json.RawMessage, int, bool) {
		*calls++
		return append(append(json.RawMessage(`{"w":`), v...), '}'), len(`{"w":`), true
	}
}

// TestEncodedOnce: with Config.Encode, a Value result is encoded once,
// when stored, and every answer from the entry (the miss and each hit,
// from either level) carries the encoding and the value's JSON, which is
// the value; an output mapper still gets plain values, and no encoding.
func TestEncodedOnce(t *testing.T) {
	var calls int
	store := &memStore{}
	cfg := Config{Encode: wrapEncode(&calls), Store: store}
	exec := &counter{}
	nodeA := cachedTool(newCache(t, cfg), "enc", exec, pipeline.CachePolicy{TTL: time.Minute})
	nodeB := cachedTool(newCache(t, cfg), "enc", exec, pipeline.CachePolicy{TTL: time.Minute})
	want := `{"inputs":null,"n":1}`
	for i, tool := range []*pipeline.Tool{nodeA, nodeA, nodeB, nodeB} {
		n, _, res := run(t, tool, nil, nil)
		v, ok := res.Value.(json.RawMessage)
		if n != 1 || !ok || string(v) != want || string(res.Encoded) != `{"w":`+want+`}` {
			t.Fatalf("answer %d: n=%d value %T %s encoded %s", i, n, res.Value, res.Value, res.Encoded)
		}
	}
	if calls != 1 {
		t.Errorf("encoded %d times", calls)
	}

	mapped := cachedTool(newCache(t, cfg), "enc", exec, pipeline.CachePolicy{TTL: time.Minute})
	mapped.OutputMapper = noMapper{}
	if _, status, res := run(t, mapped, nil, nil); status != StatusHit || res.Encoded != nil {
		t.Fatalf("mapper: %s encoded %s", status, res.Encoded)
	} else if _, ok := res.Value.(map[string]any); !ok {
		t.Fatalf("mapper input %T", res.Value)
	}
}

// TestEncodedDeclined: an encoding that does not hold the value where it
// says, or that would make the entry too large, is not stored: the entry
// holds the value's JSON alone, as before Encode, and is still cached.
func TestEncodedDeclined(t *testing.T) {
	wrong := func(v json.RawMessage) (json.RawMessage, int, bool) {
		return append(json.RawMessage(`{"w":`), v...), 0, true
	}
	var calls int
	pad := strings.Repeat("x", 300<<10)
	for name, tc := range map[string]struct {
		cfg   Config
		value func(int64) any
	}{
		"misplaced": {Config{Encode: wrong}, nil},
		"too large": {Config{MaxSize: 1 << 20, Encode: func(v json.RawMessage) (json.RawMessage, int, bool) {
			return wrapEncode(&calls)(append(v, v...))
		}}, func(n int64) any { return map[string]any{"n": n, "pad": pad} }},
	} {
		tool := cachedTool(newCache(t, tc.cfg), "enc", &counter{value: tc.value}, pipeline.CachePolicy{TTL: time.Minute})
		run(t, tool, nil, nil)
		n, status, res := run(t, tool, nil, nil)
		if _, ok := res.Value.(json.RawMessage); n != 1 || status != StatusHit || !ok || res.Encoded != nil {
			t.Errorf("%s: n=%d %s value %T encoded %d bytes", name, n, status, res.Value, len(res.Encoded))
		}
	}
}

// TestValueEntriesOfEarlierVersions: an entry a version without Encode
// wrote to the shared level (the value's JSON alone) is a hit, answered
// from its value; one this version writes decodes back to the same value.
func TestValueEntriesOfEarlierVersions(t *testing.T) {
	store := &memStore{}
	old := cachedTool(newCache(t, Config{Store: store}), "enc", &counter{}, pipeline.CachePolicy{TTL: time.Minute})
	run(t, old, nil, nil)
	var calls int
	exec := &counter{}
	current := cachedTool(newCache(t, Config{Store: store, Encode: wrapEncode(&calls)}), "enc", exec, pipeline.CachePolicy{TTL: time.Minute})
	n, status, res := run(t, current, nil, nil)
	if n != 1 || status != StatusHit || res.Encoded != nil || exec.n.Load() != 0 {
		t.Fatalf("old entry: n=%d %s encoded %s, %d executions", n, status, res.Encoded, exec.n.Load())
	}
}

// TestEncodedEntryBounds: an encoded entry whose value lies outside its
// encoding (truncated, or foreign) is a miss.
func TestEncodedEntryBounds(t *testing.T) {
	var calls int
	c := newCache(t, Config{Encode: wrapEncode(&calls)})
	b, ok := c.encodeEntry(&pipeline.Result{Value: []int{1, 2}}, time.Now(), time.Minute)
	if !ok || b[0] != kindEncoded {
		t.Fatalf("kind %d", b[0])
	}
	e, ok := decodeEntry(b)
	if !ok || string(e.payload[e.at:e.at+e.n]) != "[1,2]" {
		t.Fatalf("decoded %+v", e)
	}
	for _, bad := range [][]byte{b[:headerLen+3], b[:len(b)-4]} {
		if _, ok := decodeEntry(bytes.Clone(bad)); ok {
			t.Errorf("decoded truncated %q", bad)
		}
	}
	res, err := e.result(&pipeline.Call{Tool: &pipeline.Tool{}})
	if err != nil || string(res.Encoded) != `{"w":[1,2]}` {
		t.Fatalf("result %+v %v", res, err)
	}
}
