package caddymodule

import (
	"bytes"
	"encoding/json"

	"github.com/edgemcp/edgemcp/pipeline"
)

// A cached DB tool's result is stored encoded (pipeline.Result.Encoded), so
// that a cache hit on the direct path is a lookup and a write: without it
// every hit encoded the rows' JSON twice over (the text block, then
// structuredContent, each scanned again when the result was marshalled).

// structuredResults is what mcp-go writes between a Value result's content
// and its structuredContent's value (encodeResult): its keys sorted,
// structuredContent last when there is no isError.
const structuredResults = `,"structuredContent":{"results":`

// preStructured is a protocol version without structuredContent.
const preStructured = "2025-03-26"

// encodeValue is cache.Config.Encode: a Value result's JSON encoded once
// as the gateway writes it to a client with structuredContent, exactly
// as encodeResult and mcp-go's marshalling make it, and where value sits
// in it. It checks that the encoding a client without structuredContent
// gets is that encoding cut before structuredResults, so that encodedFor
// can write either from the one stored.
func encodeValue(value json.RawMessage) (json.RawMessage, int, bool) {
	full, plain := marshalValue(value, structuredSince), marshalValue(value, preStructured)
	cut := len(plain) - 1 // before plain's closing brace
	at := cut + len(structuredResults)
	if cut < 1 || at+len(value)+2 != len(full) ||
		!bytes.Equal(full[:cut], plain[:cut]) ||
		string(full[cut:at]) != structuredResults ||
		!bytes.Equal(full[at:at+len(value)], value) ||
		string(full[at+len(value):]) != "}}" {
		return nil, 0, false
	}
	return full, at, true
}

// marshalValue is the result encodeResult makes of value for version, as
// the direct path marshals it; nil if it cannot.
func marshalValue(value json.RawMessage, version string) []byte {
	out, perr := encodeResult(&pipeline.Result{Value: value}, version)
	if perr != nil {
		return nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
}

// encodedFor is res.Encoded as written to a client of version: as it is
// for one with structuredContent, else cut before structuredResults (what
// encodeValue checked). nil when res.Encoded does not have that shape (an
// entry in a shared second level written otherwise): the Value is then
// encoded as usual.
func encodedFor(res *pipeline.Result, version string) json.RawMessage {
	enc, cut := storedEncoding(res)
	if enc == nil || version >= structuredSince {
		return enc
	}
	out := make([]byte, cut+1)
	copy(out, enc[:cut])
	out[cut] = '}'
	return out
}

// storedEncoding is res.Encoded and where structuredResults starts in it,
// when it has the shape encodeValue made; nil otherwise.
func storedEncoding(res *pipeline.Result) (json.RawMessage, int) {
	enc := res.Encoded
	value, ok := res.Value.(json.RawMessage)
	cut := len(enc) - 2 - len(value) - len(structuredResults)
	if !ok || cut < 1 || string(enc[cut:cut+len(structuredResults)]) != structuredResults ||
		!bytes.Equal(enc[cut+len(structuredResults):len(enc)-2], value) ||
		string(enc[len(enc)-2:]) != "}}" {
		return nil, 0
	}
	return enc, cut
}
