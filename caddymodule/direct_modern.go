package caddymodule

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/pipeline"
)

// The direct path (direct.go) for clients on a protocol without sessions
// (2026-07-28 and later; mcp-go's client speaks it by default). Such a
// client sends no initialize: every request carries its protocol version,
// its capabilities and who it is in params._meta, and the standard headers
// Mcp-Protocol-Version, Mcp-Method and Mcp-Name repeat what the body says.
// mcp-go checks all of that and then runs the call as it would on a
// session; its answer is the session's answer with resultType and the
// server's identity in _meta. Going through mcp-go cost a DB tool call
// about twice the CPU and allocations of the same call on 2025-11-25
// (README "Limits, cost per call, scale and overload"), so the plainest
// well-formed modern call is answered here too. Anything mcp-go would look
// at twice (another _meta key such as a progress token, a log level or a
// trace context, params beyond name, arguments and _meta, a Last-Event-ID,
// a header that disagrees with the body, a tool whose inputs travel in
// headers) goes through mcp-go, which answers it as it always would.

// modernMetaKeys are the _meta keys of a plain modern request.
var modernMetaKeys = map[string]bool{
	mcp.MetaKeyProtocolVersion:    true,
	mcp.MetaKeyClientInfo:         true,
	mcp.MetaKeyClientCapabilities: true,
}

// modernVersion is the protocol version of a modern tools/call of the tool
// name whose _meta is meta, when the request is one the direct path may
// answer; "" otherwise (a session-era request, or one left to mcp-go).
func (h *Handler) modernVersion(meta json.RawMessage, r *http.Request, name string) string {
	if len(meta) == 0 || r.Header.Get("Last-Event-ID") != "" {
		return ""
	}
	version := h.modernMetas.version(meta, h.streamable.SupportsProtocolVersion)
	if version == "" || r.Header.Get(mcp.HeaderProtocolVersion) != version {
		return ""
	}
	if mcp.RequiresStandardHeaders(version) {
		if r.Header.Get(mcp.HeaderMethod) != string(mcp.MethodToolsCall) {
			return ""
		}
		if got, ok := mcp.DecodeHeaderValue(r.Header.Get(mcp.HeaderName)); !ok || got == "" || got != name {
			return ""
		}
	}
	return version
}

// modernMetas remembers what plainModernMeta said of a _meta. A client
// sends the same _meta with every request (its version, capabilities and
// name), and decoding it cost a modern call about as much as the rest of
// its JSON. Bounded: past maxModernMetas texts, new ones are decoded every
// time, as is any _meta longer than maxModernMetaSize (a client's own is
// about 200 bytes), so the memo holds at most 512 KiB whatever is sent.
type modernMetas struct {
	mu    sync.RWMutex
	known map[string]string // _meta → plainModernMeta's answer
}

const (
	maxModernMetas    = 1024
	maxModernMetaSize = 512
)

func (m *modernMetas) version(meta json.RawMessage, supported func(string) bool) string {
	m.mu.RLock()
	v, ok := m.known[string(meta)]
	m.mu.RUnlock()
	if ok {
		return v
	}
	v = plainModernMeta(meta, supported)
	if len(meta) > maxModernMetaSize {
		return v
	}
	m.mu.Lock()
	if len(m.known) < maxModernMetas {
		m.known[string(meta)] = v
	}
	m.mu.Unlock()
	return v
}

// plainModernMeta is the protocol version a _meta of only the protocol's
// own fields declares, if supported; "" for any other _meta.
func plainModernMeta(meta json.RawMessage, supported func(string) bool) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(meta, &fields) != nil {
		return ""
	}
	for k := range fields {
		if !modernMetaKeys[k] {
			return ""
		}
	}
	var version string
	if json.Unmarshal(fields[mcp.MetaKeyProtocolVersion], &version) != nil || !mcp.IsModernProtocol(version) || !supported(version) {
		return ""
	}
	// Capabilities are required (an empty object is fine); a client's
	// identity is optional, but must be one if given.
	var caps *mcp.ClientCapabilities
	if json.Unmarshal(fields[mcp.MetaKeyClientCapabilities], &caps) != nil || caps == nil {
		return ""
	}
	if info, ok := fields[mcp.MetaKeyClientInfo]; ok {
		var impl *mcp.Implementation
		if json.Unmarshal(info, &impl) != nil || impl == nil {
			return ""
		}
	}
	return version
}

// headerBoundTools are the tools whose input schema binds inputs to
// headers (x-mcp-header), which mcp-go checks against the arguments of a
// modern call; found once per registry version (registry.go).
func headerBoundTools(tools []*pipeline.Tool) map[string]bool {
	var bound map[string]bool
	for _, t := range tools {
		if bytes.Contains(t.InputSchema, []byte("x-mcp-header")) {
			if bound == nil {
				bound = make(map[string]bool)
			}
			bound[t.Name] = true
		}
	}
	return bound
}

// decorateModern adds to a result what mcp-go adds for a modern request:
// resultType and the server's identity in _meta.
func (h *Handler) decorateModern(res *mcp.CallToolResult) {
	if res.ResultType == "" {
		res.ResultType = mcp.ResultTypeComplete
	}
	if meta := res.EnsureResultMeta(); meta.ServerInfo() == nil {
		meta.SetServerInfo(h.serverInfo)
	}
}

// modernResultType is what decorateModern adds, in mcp-go's encoding, where
// a stored result (encoded.go) has it: its keys are sorted, and resultType
// sorts between content (and isError) and structuredContent.
const modernResultType = `,"resultType":"` + string(mcp.ResultTypeComplete) + `"`

// encodeModern is a stored result (pipeline.Result.Encoded) as written to
// a modern client: decorateModern's fields spliced into its encoding; nil,
// nil when res has none (it is then decoded, decorated and encoded).
func encodeModern(res *pipeline.Result, server *mcp.Implementation) (json.RawMessage, *pipeline.Error) {
	if res.Canonical { // any result's encoding: where resultType goes is not known
		return nil, nil
	}
	enc, cut := storedEncoding(res)
	if enc == nil {
		return nil, nil
	}
	out := make([]byte, 0, len(enc)+len(modernResultType))
	out = append(append(append(out, enc[:cut]...), modernResultType...), enc[cut:]...)
	meta := make(map[string]any, len(res.Meta)+1)
	maps.Copy(meta, res.Meta)
	if _, ok := meta[mcp.MetaKeyServerInfo]; !ok {
		meta[mcp.MetaKeyServerInfo] = server
	}
	return withMeta(out, meta)
}
