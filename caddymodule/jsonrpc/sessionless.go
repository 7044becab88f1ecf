package jsonrpc

import (
	"encoding/json"
	"maps"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/pipeline"
)

// On the sessionless protocol (2026-07-28 and later) mcp-go's answer to a
// call is the session's answer with resultType and the server's identity
// in _meta. These write that from a result the gateway already has.

// DecorateSessionless adds to a result what mcp-go adds for a sessionless
// request: resultType and the server's identity in _meta.
func DecorateSessionless(res *mcp.CallToolResult, server *mcp.Implementation) {
	if res.ResultType == "" {
		res.ResultType = mcp.ResultTypeComplete
	}
	if meta := res.EnsureResultMeta(); meta.ServerInfo() == nil {
		meta.SetServerInfo(*server)
	}
}

// sessionlessResultType is what DecorateSessionless adds, in mcp-go's
// encoding, where a stored result (EncodeValue) has it: its keys are
// sorted, and resultType sorts between content (and isError) and
// structuredContent.
const sessionlessResultType = `,"resultType":"` + string(mcp.ResultTypeComplete) + `"`

// encodeSessionless is a stored result (pipeline.Result.Encoded) as
// written to a sessionless client: DecorateSessionless's fields spliced
// into its encoding; nil, nil when res has none (it is then decoded,
// decorated and encoded).
func encodeSessionless(res *pipeline.Result, server *mcp.Implementation) (json.RawMessage, *pipeline.Error) {
	if res.Canonical { // any result's encoding: where resultType goes is not known
		return nil, nil
	}
	enc, cut := storedEncoding(res)
	if enc == nil {
		return nil, nil
	}
	out := make([]byte, 0, len(enc)+len(sessionlessResultType))
	out = append(append(append(out, enc[:cut]...), sessionlessResultType...), enc[cut:]...)
	meta := make(map[string]any, len(res.Meta)+1)
	maps.Copy(meta, res.Meta)
	if _, ok := meta[mcp.MetaKeyServerInfo]; !ok {
		meta[mcp.MetaKeyServerInfo] = server
	}
	return withMeta(out, meta)
}
