package jsonrpc

import (
	"bytes"
	"encoding/json"
	"unsafe"

	"github.com/edgemcp/edgemcp/pipeline"
)

// A cached DB tool's result is stored encoded (pipeline.Result.Encoded), so
// that a cache hit on the direct path is a lookup and a write: without it
// every hit encoded the rows' JSON twice over (the text block, then
// structuredContent, each scanned again when the result was marshalled).

// structuredResults is what mcp-go writes between a Value result's content
// and its structuredContent's value (EncodeResult): its keys sorted,
// structuredContent last when there is no isError.
const structuredResults = `,"structuredContent":{"results":`

// EncodeValue is cache.Config.Encode: a Value result's JSON encoded once
// as the gateway writes it to a client with structuredContent (valueResult),
// and where value sits in it, so that encodedFor can write either form
// from the one stored.
func EncodeValue(value json.RawMessage) (json.RawMessage, int, bool) {
	enc, at := valueResult(value)
	return enc, at, true
}

// valueResult is what EncodeResult and mcp-go's marshalling make of a
// Value result whose JSON is text (compact and HTML-escaped, as
// json.Marshal writes it), for a client with structuredContent:
//
//	{"content":[{"type":"text","text":<text as a JSON string>}],"structuredContent":{"results":<text>}}
//
// put together without encoding/json, and where text starts in it.
// TestEncodedValueIsMCPGoEncoding and FuzzValueResult hold it to mcp-go's
// bytes.
func valueResult(text []byte) (json.RawMessage, int) {
	out := make([]byte, 0, 2*len(text)+len(textContentOpen)+len(structuredResults)+16)
	out = append(out, textContentOpen...)
	// The string view is only read, while text is alive.
	out = pipeline.AppendJSONString(out, unsafe.String(unsafe.SliceData(text), len(text)), true)
	out = append(append(out, "}]"...), structuredResults...)
	at := len(out)
	return append(append(out, text...), "}}"...), at
}

// textContentOpen opens a result of one text block, as mcp-go writes it.
const textContentOpen = `{"content":[{"type":"text","text":`

// EncodedValueResult is res with its Value encoded for the direct path
// (valueResult), so that it is written as an Encoded result is; res itself
// when it is not a plain Value result or does not encode (EncodeResult// then says why).
func EncodedValueResult(res *pipeline.Result) *pipeline.Result {
	if res.Native != nil || res.Canonical || res.Encoded != nil {
		return res
	}
	text, err := pipeline.EncodeValue(res.Value)
	if err != nil {
		return res
	}
	out := *res
	out.Value = json.RawMessage(text)
	out.Encoded, _ = valueResult(text)
	return &out
}

// encodedFor is res.Encoded as written to a client of version: as it is
// for one with structuredContent, else cut before structuredResults (mcp-go
// writes the one as the other without structuredContent;
// TestEncodedValueIsMCPGoEncoding holds it). nil when res.Encoded does not
// have that shape (an entry in a shared second level written otherwise):
// the Value is then encoded as usual.
func encodedFor(res *pipeline.Result, version string) json.RawMessage {
	enc, cut := storedEncoding(res)
	if enc == nil || version >= StructuredSince {
		return enc
	}
	out := make([]byte, cut+1)
	copy(out, enc[:cut])
	out[cut] = '}'
	return out
}

// storedEncoding is res.Encoded and where structuredResults starts in it,
// when it has the shape EncodeValue made; nil otherwise.
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
