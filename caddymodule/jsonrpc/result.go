package jsonrpc

import (
	"encoding/json"
	"maps"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/pipeline"
)

// StructuredSince is the first protocol version with structuredContent.
const StructuredSince = "2025-06-18"

// EncodeResult is the response stage (docs/architecture.md, Stages): the
// result as JSON in one text block, plus structuredContent {"results": ...}
// for clients that understand it. A native MCP result is passed through
// unchanged.
func EncodeResult(res *pipeline.Result, version string) (*mcp.CallToolResult, *pipeline.Error) {
	if res.Native != nil {
		var out mcp.CallToolResult
		if err := json.Unmarshal(res.Native, &out); err != nil {
			return nil, pipeline.Fail(pipeline.StageResponse, err, "tool returned an invalid MCP result")
		}
		if res.Meta != nil {
			AddMeta(&out, res.Meta)
		}
		return &out, nil
	}
	text, err := json.Marshal(res.Value)
	if err != nil {
		return nil, pipeline.Fail(pipeline.StageResponse, err, "result is not JSON-encodable")
	}
	out := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(text))}}
	if version >= StructuredSince {
		out.StructuredContent = map[string]json.RawMessage{"results": text}
	}
	if res.Meta != nil {
		AddMeta(out, res.Meta)
	}
	return out, nil
}

// AddMeta merges fields into a result's _meta (a stale cache serve says so
// there), keeping what a native result already carries.
func AddMeta(out *mcp.CallToolResult, fields map[string]any) {
	if out.Meta == nil {
		out.Meta = &mcp.Meta{}
	}
	if out.Meta.AdditionalFields == nil {
		out.Meta.AdditionalFields = make(map[string]any, len(fields))
	}
	maps.Copy(out.Meta.AdditionalFields, fields)
}

// CanonicalNative re-encodes a Native result as the gateway writes it
// (mcp-go's encoding of the decoded result), for the result cache to store
// once (pipeline.Result.Canonical). A result with a _meta of its own is
// left as it is: adding the gateway's _meta to it means merging the two.
func CanonicalNative(native json.RawMessage) (json.RawMessage, bool) {
	var out mcp.CallToolResult
	if json.Unmarshal(native, &out) != nil || out.Meta != nil {
		return nil, false
	}
	b, err := json.Marshal(&out)
	return b, err == nil
}

// EncodeCanonical is EncodeResult for a Canonical result, or an Encoded
// one (encodedFor; nil, nil when it cannot be used: EncodeResult then
// encodes its Value), written as mcp-go would write it: its bytes with
// the result's _meta, which sorts before every other key of mcp-go's
// encoding (a map's keys are written in order, and "_" < "a"), put first.
// server is the gateway's identity, which a sessionless result names.
func EncodeCanonical(res *pipeline.Result, version string, server *mcp.Implementation) (json.RawMessage, *pipeline.Error) {
	if mcp.IsModernProtocol(version) {
		return encodeSessionless(res, server)
	}
	b := res.Native
	if !res.Canonical {
		if b = encodedFor(res, version); b == nil {
			return nil, nil
		}
	}
	return withMeta(b, res.Meta)
}

// withMeta is b, an encoded result without _meta, with meta (if any) as its
// _meta.
func withMeta(b json.RawMessage, meta map[string]any) (json.RawMessage, *pipeline.Error) {
	if meta == nil {
		return b, nil
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, pipeline.Fail(pipeline.StageResponse, nil, "tool returned an invalid MCP result")
	}
	m, err := json.Marshal(&mcp.Meta{AdditionalFields: meta})
	if err != nil {
		return nil, pipeline.Fail(pipeline.StageResponse, err, "result metadata is not JSON-encodable")
	}
	out := make([]byte, 0, len(b)+len(m)+10)
	out = append(append(append(out, `{"_meta":`...), m...), ',')
	if rest := b[1:]; len(rest) > 0 && rest[0] == '}' {
		out = out[:len(out)-1] // no other key
		return append(out, rest...), nil
	}
	return append(out, b[1:]...), nil
}
