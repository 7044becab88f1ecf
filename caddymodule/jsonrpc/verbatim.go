package jsonrpc

import (
	"encoding/json"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/pipeline"
)

// A proxied tools/call result (pipeline.Result.Verbatim) is written as the
// MCP server sent it (docs/sources.md, MCP servers), on both paths: the
// direct path writes EncodeVerbatim's bytes, and mcp-go's handler records
// them for the Writer to put in place of mcp-go's encoding (passthrough.go
// in fastpath). Decoding it into mcp-go's types and encoding it again cost
// a proxied call more than the rest of its answer, sorted its keys and
// dropped every field mcp-go does not model.

// EncodeVerbatim is a Verbatim result as written to a client of version:
// the server's bytes, with the result's Meta in its _meta (the gateway's
// entries win, as AddMeta's do), "content":[] when it has no content
// (mcp-go always writes one), and on the sessionless protocol what
// DecorateSessionless adds that the server did not write itself:
// resultType and the gateway's identity in _meta. Members are added at the
// end of an object, as MergeResult adds them. nil when the bytes cannot be
// written so (not an object, a _meta that is not one): the result is then
// decoded and encoded as any Native result.
func EncodeVerbatim(res *pipeline.Result, version string, server *mcp.Implementation) json.RawMessage {
	b := res.Native
	var meta json.RawMessage
	hasContent, hasType := false, false
	if Members(b, func(key string, start, end int) bool {
		switch key {
		case "content":
			hasContent = true
		case "resultType":
			hasType = true
		case "_meta":
			meta = b[start:end]
		}
		return true
	}) != nil {
		return nil
	}
	modern := mcp.IsModernProtocol(version)
	out := []byte(b)
	var err error
	if !hasContent {
		if out, err = WithMember(out, "content", []byte("[]")); err != nil {
			return nil
		}
	}
	if modern && !hasType {
		if out, err = WithMember(out, "resultType", []byte(`"`+mcp.ResultTypeComplete+`"`)); err != nil {
			return nil
		}
	}
	if len(res.Meta) == 0 && !modern {
		return out
	}
	merged, ok := mergeMeta(meta, res.Meta, modern, server)
	if !ok {
		return nil
	}
	if merged == nil { // nothing to add
		return out
	}
	if out, err = WithMember(out, "_meta", merged); err != nil {
		return nil
	}
	return out
}

// mergeMeta is meta, a result's _meta as sent (nil: none), with fields set
// in it (in the order of their keys, so that the bytes are the same on
// every call) and, when modern, the server's identity unless it names one;
// nil, true when there is nothing to add; false when meta is not an
// object or a field does not encode.
func mergeMeta(meta json.RawMessage, fields map[string]any, modern bool, server *mcp.Implementation) (json.RawMessage, bool) {
	addInfo := modern
	if meta != nil {
		if Members(meta, func(key string, _, _ int) bool {
			if key == mcp.MetaKeyServerInfo {
				addInfo = false
			}
			return true
		}) != nil {
			return nil, false
		}
	}
	if len(fields) == 0 && !addInfo {
		return nil, true
	}
	out := []byte(meta)
	if out == nil {
		out = []byte("{}")
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k == mcp.MetaKeyServerInfo {
			addInfo = false
		}
		v, err := json.Marshal(fields[k])
		if err != nil {
			return nil, false
		}
		if out, err = WithMember(out, k, v); err != nil {
			return nil, false
		}
	}
	if addInfo {
		v, err := json.Marshal(server)
		if err != nil {
			return nil, false
		}
		if out, err = WithMember(out, mcp.MetaKeyServerInfo, v); err != nil {
			return nil, false
		}
	}
	return out, true
}
