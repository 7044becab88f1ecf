package fastpath

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// The direct path (Server.Answer) for clients on the sessionless protocol
// (2026-07-28 and later; mcp-go's client speaks it by default). Such a
// client sends no initialize: every request carries its protocol version,
// its capabilities and who it is in params._meta, and the standard headers
// Mcp-Protocol-Version, Mcp-Method and Mcp-Name repeat what the body says.
// mcp-go checks all of that and then runs the call as it would on a
// session; its answer is the session's answer with resultType and the
// server's identity in _meta (jsonrpc.DecorateSessionless). Going through
// mcp-go cost a DB tool call about twice the CPU and allocations of the
// same call on 2025-11-25 (docs/benchmarks.md, "Limits, cost per call,
// scale and overload"), so the plainest well-formed sessionless call is
// answered here too. Anything mcp-go would look at twice (another _meta
// key such as a progress token, a log level or a trace context, params
// beyond name, arguments and _meta, a Last-Event-ID, a header that
// disagrees with the body, a tool whose inputs travel in headers) goes
// through mcp-go, which answers it as it always would.

// sessionlessMetaKeys are the _meta keys of a plain sessionless request.
var sessionlessMetaKeys = map[string]bool{
	mcp.MetaKeyProtocolVersion:    true,
	mcp.MetaKeyClientInfo:         true,
	mcp.MetaKeyClientCapabilities: true,
	// Read by the shell (Call.Conversation); mcp-go ignores it.
	ConversationMetaKey: true,
}

// sessionlessVersion is the protocol version of a sessionless tools/call
// of the tool name whose _meta is meta, when the request is one the direct
// path may answer; "" otherwise (a request on a session, or one left to
// mcp-go).
func (s *Server) sessionlessVersion(meta json.RawMessage, r *http.Request, name string) string {
	if len(meta) == 0 || r.Header.Get("Last-Event-ID") != "" {
		return ""
	}
	version := s.metas.version(meta, s.streamable.SupportsProtocolVersion)
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

// sessionlessMetas remembers what plainSessionlessMeta said of a _meta. A client
// sends the same _meta with every request (its version, capabilities and
// name), and decoding it cost a sessionless call about as much as the rest of
// its JSON. Bounded: past maxSessionlessMetas texts, new ones are decoded every
// time, as is any _meta longer than maxSessionlessMetaSize (a client's own is
// about 200 bytes), so the memo holds at most 512 KiB whatever is sent.
type sessionlessMetas struct {
	mu    sync.RWMutex
	known map[string]string // _meta → plainSessionlessMeta's answer
}

func newSessionlessMetas() *sessionlessMetas {
	return &sessionlessMetas{known: make(map[string]string)}
}

const (
	maxSessionlessMetas    = 1024
	maxSessionlessMetaSize = 512
)

func (m *sessionlessMetas) version(meta json.RawMessage, supported func(string) bool) string {
	m.mu.RLock()
	v, ok := m.known[string(meta)]
	m.mu.RUnlock()
	if ok {
		return v
	}
	v = plainSessionlessMeta(meta, supported)
	if len(meta) > maxSessionlessMetaSize {
		return v
	}
	m.mu.Lock()
	if len(m.known) < maxSessionlessMetas {
		m.known[string(meta)] = v
	}
	m.mu.Unlock()
	return v
}

// plainSessionlessMeta is the protocol version a _meta of only the protocol's
// own fields declares, if supported; "" for any other _meta.
func plainSessionlessMeta(meta json.RawMessage, supported func(string) bool) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(meta, &fields) != nil {
		return ""
	}
	for k := range fields {
		if !sessionlessMetaKeys[k] {
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
