package cache

import (
	"encoding/binary"
	"encoding/json"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// An entry is what both levels store: a small header (kind, expiry, time
// stored) and the result as JSON. bigcache has one life window for every
// entry, so each entry carries its own expiry and is checked on read.
const (
	kindValue  byte = 1 // Result.Value as JSON
	kindNative byte = 2 // Result.Native, a complete MCP CallToolResult
	// kindCanonical is a Native result in the gateway's own encoding
	// (Config.Canonicalize), which the gateway writes as it is.
	kindCanonical byte = 3
	headerLen          = 1 + 8 + 8
)

type entry struct {
	kind    byte
	expires time.Time
	stored  time.Time
	payload []byte
}

// encodeEntry serializes a result; ok is false when the value cannot be
// expressed in JSON (it is then served uncached).
func encodeEntry(res *pipeline.Result, now time.Time, ttl time.Duration, canonicalize func(json.RawMessage) (json.RawMessage, bool)) ([]byte, bool) {
	kind, payload := kindNative, []byte(res.Native)
	if res.Canonical {
		kind = kindCanonical
	} else if res.Native != nil && canonicalize != nil {
		if c, ok := canonicalize(res.Native); ok {
			kind, payload = kindCanonical, c
		}
	}
	if res.Native == nil {
		b, err := json.Marshal(res.Value)
		if err != nil {
			return nil, false
		}
		kind, payload = kindValue, b
	}
	out := make([]byte, headerLen, headerLen+len(payload))
	out[0] = kind
	binary.BigEndian.PutUint64(out[1:9], uint64(now.Add(ttl).UnixNano()))
	binary.BigEndian.PutUint64(out[9:17], uint64(now.UnixNano()))
	return append(out, payload...), true
}

// decodeEntry reads what encodeEntry wrote; ok is false for anything else
// (a foreign or truncated value in Redis is a miss, never an error).
func decodeEntry(b []byte) (entry, bool) {
	if len(b) < headerLen || (b[0] != kindValue && b[0] != kindNative && b[0] != kindCanonical) {
		return entry{}, false
	}
	return entry{
		kind:    b[0],
		expires: time.Unix(0, int64(binary.BigEndian.Uint64(b[1:9]))),
		stored:  time.Unix(0, int64(binary.BigEndian.Uint64(b[9:17]))),
		payload: b[headerLen:],
	}, true
}

func (e entry) fresh(now time.Time) bool { return now.Before(e.expires) }

// usableStale: expired, but no longer ago than the stale window.
func (e entry) usableStale(now time.Time, window time.Duration) bool {
	return window > 0 && now.Before(e.expires.Add(window))
}

// result rebuilds the tool's result. The JSON is handed on as is (the
// response stage writes it verbatim), except when an output mapper will
// read it: scripts get plain values, as on an uncached call.
func (e entry) result(call *pipeline.Call) (*pipeline.Result, error) {
	if e.kind == kindNative || e.kind == kindCanonical {
		return &pipeline.Result{Native: json.RawMessage(e.payload), Canonical: e.kind == kindCanonical}, nil
	}
	if call.Tool != nil && call.Tool.OutputMapper != nil {
		var v any
		if err := json.Unmarshal(e.payload, &v); err != nil {
			return nil, err
		}
		return &pipeline.Result{Value: v}, nil
	}
	return &pipeline.Result{Value: json.RawMessage(e.payload)}, nil
}
