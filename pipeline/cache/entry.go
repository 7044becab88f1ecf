package cache

import (
	"bytes"
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
	// kindEncoded is a Value result encoded as the gateway writes it
	// (Config.Encode): two big-endian uint32, where the value's JSON
	// starts in the encoding and how long it is, then the encoding.
	// Versions before it read such an entry as a miss.
	kindEncoded byte = 4
	// kindVerbatim is an MCP server's own result as it sent it
	// (Result.Verbatim), which the gateway writes as it is: a hit is
	// written as the call that filled the entry was. Versions before it
	// read such an entry as a miss.
	kindVerbatim     byte = 5
	headerLen             = 1 + 8 + 8
	encodedHeaderLen      = 4 + 4
)

type entry struct {
	kind    byte
	expires time.Time
	stored  time.Time
	payload []byte
	// at and n locate the value's JSON in a kindEncoded payload.
	at, n int
}

// encodeEntry serializes a result; ok is false when the value cannot be
// expressed in JSON (it is then served uncached). A Value whose encoding
// (Config.Encode) would make the entry too large for the cache is stored
// as its JSON alone, as before there was an encoding.
func (c *Cache) encodeEntry(res *pipeline.Result, now time.Time, ttl time.Duration) ([]byte, bool) {
	kind, payload := kindNative, []byte(res.Native)
	var at, n int
	if res.Canonical {
		kind = kindCanonical
	} else if res.Verbatim && res.Native != nil {
		kind = kindVerbatim
	} else if res.Native != nil && c.canonicalize != nil {
		if b, ok := c.canonicalize(res.Native); ok {
			kind, payload = kindCanonical, b
		}
	}
	if res.Native == nil {
		b, err := json.Marshal(res.Value)
		if err != nil {
			return nil, false
		}
		kind, payload = kindValue, b
		if c.encode != nil {
			enc, i, ok := c.encode(b)
			if ok && i >= 0 && i+len(b) <= len(enc) &&
				headerLen+encodedHeaderLen+len(enc) <= c.maxEntry &&
				bytes.Equal(enc[i:i+len(b)], b) {
				kind, payload, at, n = kindEncoded, enc, i, len(b)
			}
		}
	}
	size := headerLen + len(payload)
	if kind == kindEncoded {
		size += encodedHeaderLen
	}
	out := make([]byte, headerLen, size)
	out[0] = kind
	binary.BigEndian.PutUint64(out[1:9], uint64(now.Add(ttl).UnixNano()))
	binary.BigEndian.PutUint64(out[9:17], uint64(now.UnixNano()))
	if kind == kindEncoded {
		out = binary.BigEndian.AppendUint32(out, uint32(at))
		out = binary.BigEndian.AppendUint32(out, uint32(n))
	}
	return append(out, payload...), true
}

// decodeEntry reads what encodeEntry wrote; ok is false for anything else
// (a foreign or truncated value in Redis is a miss, never an error).
func decodeEntry(b []byte) (entry, bool) {
	if len(b) < headerLen || b[0] < kindValue || b[0] > kindVerbatim {
		return entry{}, false
	}
	e := entry{
		kind:    b[0],
		expires: time.Unix(0, int64(binary.BigEndian.Uint64(b[1:9]))),
		stored:  time.Unix(0, int64(binary.BigEndian.Uint64(b[9:17]))),
		payload: b[headerLen:],
	}
	if e.kind == kindEncoded {
		p := e.payload
		if len(p) < encodedHeaderLen {
			return entry{}, false
		}
		at, n := uint64(binary.BigEndian.Uint32(p)), uint64(binary.BigEndian.Uint32(p[4:]))
		e.payload = p[encodedHeaderLen:]
		if at+n > uint64(len(e.payload)) {
			return entry{}, false
		}
		e.at, e.n = int(at), int(n)
	}
	return e, true
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
	if e.kind == kindNative || e.kind == kindCanonical || e.kind == kindVerbatim {
		return &pipeline.Result{Native: json.RawMessage(e.payload), Canonical: e.kind == kindCanonical, Verbatim: e.kind == kindVerbatim}, nil
	}
	value := e.payload
	if e.kind == kindEncoded {
		value = e.payload[e.at : e.at+e.n]
	}
	if call.Tool != nil && call.Tool.OutputMapper != nil {
		var v any
		if err := json.Unmarshal(value, &v); err != nil {
			return nil, err
		}
		return &pipeline.Result{Value: v}, nil
	}
	res := &pipeline.Result{Value: json.RawMessage(value)}
	if e.kind == kindEncoded {
		res.Encoded = json.RawMessage(e.payload)
	}
	return res, nil
}
