package fastpath

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/pipeline"
)

// The direct path answers the common tools/call itself instead of handing it
// to mcp-go's dispatcher, which re-parses the message several times over
// (era detection, _meta, header validation, parameter decoding) and costs
// about as much CPU per call as the whole pipeline with its Postgres round
// trip. It applies only where mcp-go would add nothing: a session on a
// protocol version with sessions (2025-03-26 … 2025-11-25) or a plain
// sessionless request (sessionlessVersion), JSON without any other _meta
// (no progress token) or params only mcp-go reads, a known
// tool that asks for no approval and, if it may talk to the client while it
// runs, can say all it could there (directPeer), and a client that
// accepts a JSON answer. Everything else, including every failure to
// validate, goes through mcp-go, which answers it as it always would. The
// answer is the same bytes mcp-go would write (the tests compare both paths).

// sessionVersions are the protocol versions whose requests carry a session.
var sessionVersions = map[string]bool{"2025-03-26": true, "2025-06-18": true, "2025-11-25": true}

// directSession reports whether r may be answered on a direct path (a call
// here, a tools/list in AnswerList): a protocol version with sessions,
// JSON in and out, and a session id of this caller's that was not ended
// (Shell.SessionLive).
func (s *Server) directSession(r *http.Request) bool {
	return sessionVersions[r.Header.Get("Mcp-Protocol-Version")] && jsonExchange(r) && s.shell.SessionLive(r)
}

// jsonExchange: a JSON request from a client that takes a JSON answer.
func jsonExchange(r *http.Request) bool {
	if !acceptsJSON(r) {
		return false
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" { // what clients send; else parse it
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return false
		}
	}
	return true
}

// Answer serves c when it qualifies and reports whether it did. r's
// context carries c (WithCall).
func (s *Server) Answer(w http.ResponseWriter, r *http.Request, c *Call) bool {
	if c == nil || !c.direct {
		return false
	}
	if c.sessionless != "" { // no session: the request itself was checked (sessionlessVersion)
		if !jsonExchange(r) {
			return false
		}
	} else if !s.directSession(r) {
		return false
	}
	tools := c.Registry.Tools()
	tool := tools.Engine.Lookup(c.Name)
	if tool == nil || tool.Approval != nil {
		return false
	}
	// A sessionless client cannot be asked anything while a call runs, and
	// an input bound to a header is checked by mcp-go.
	if c.sessionless != "" && (tool.Interactive || tools.headerBound[tool.Name]) {
		return false
	}
	ctx := r.Context()
	var peer *directPeer
	if tool.Interactive {
		if peer = s.directPeerFor(w, r); peer == nil {
			return false
		}
		ctx = pipeline.WithPeer(ctx, peer)
	}
	args := c.Args
	if args == nil {
		args = map[string]any{}
	}
	s.opts.DirectCalls.Inc()
	// A Canonical result (a cache hit of a source's result), an Encoded
	// one (a DB tool's cache hit) or a Verbatim one (an MCP server's own)
	// is written as the bytes it is (for a sessionless client, with what
	// mcp-go adds spliced in); any other is encoded here, as mcp-go would.
	res, raw, perr := s.callTool(ctx, c.Registry, tool.Name, args, RequestInfo(ctx, c), anyRaw)
	if res != nil && perr == nil {
		if c.sessionless != "" {
			jsonrpc.DecorateSessionless(res, &s.opts.ServerInfo)
		}
		b, err := json.Marshal(res)
		if err != nil {
			perr = pipeline.Fail(pipeline.StageResponse, err, "result is not JSON-encodable")
		}
		raw = b
	}
	if perr == nil && len(raw) == 0 {
		perr = pipeline.Fail(pipeline.StageResponse, errors.New("no result"), "the tool gave no result")
	}
	var msg []byte // the JSON-RPC response, as json.Encoder writes it
	if perr != nil {
		msg = jsonrpc.ErrorMessage(c.RawID, perr)
	} else {
		msg = jsonrpc.ResultMessage(c.RawID, raw)
	}
	if peer != nil && peer.answer(json.RawMessage(msg)) {
		return true // the answer became an event stream
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(msg)
	return true
}

// acceptsJSON: streamable HTTP clients send "application/json,
// text/event-stream"; one that accepts only event streams is left to mcp-go.
func acceptsJSON(r *http.Request) bool {
	return acceptsType(r, "application/json")
}

// acceptsType reports whether the Accept header takes the media type
// (itself, its type's wildcard or */*).
func acceptsType(r *http.Request, want string) bool {
	anyOfType := want[:strings.IndexByte(want, '/')+1] + "*"
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			// The media type without parameters (mime.ParseMediaType's
			// result, without its allocations on every call).
			mt, _, _ := strings.Cut(part, ";")
			mt = strings.TrimSpace(mt)
			if strings.EqualFold(mt, want) || strings.EqualFold(mt, anyOfType) || mt == "*/*" {
				return true
			}
		}
	}
	return false
}
