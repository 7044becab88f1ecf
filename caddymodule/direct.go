package caddymodule

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
)

// The direct path answers the common tools/call itself instead of handing it
// to mcp-go's dispatcher, which re-parses the message several times over
// (era detection, _meta, header validation, parameter decoding) and costs
// about as much CPU per call as the whole pipeline with its Postgres round
// trip. It applies only where mcp-go would add nothing: a session on a
// protocol version with sessions (2025-03-26 … 2025-11-25), a plain JSON
// request without _meta (no progress token, no 2026-07-28 fields), a known
// tool that asks for no approval and, if it may talk to the client while it
// runs, can say all it could there (direct_peer.go), and a client that
// accepts a JSON answer. Everything else, including every failure to
// validate, goes through mcp-go, which answers it as it always would. The
// answer is the same bytes mcp-go would write (the tests compare both paths).

// sessionVersions are the protocol versions whose requests carry a session.
var sessionVersions = map[string]bool{"2025-03-26": true, "2025-06-18": true, "2025-11-25": true}

// directSession reports whether r may be answered on a direct path (a call
// here, a tools/list in direct_list.go): a protocol version with sessions,
// JSON in and out, and a session id of this caller's that was not ended
// (admitSession's verdict).
func (h *Handler) directSession(r *http.Request) bool {
	return sessionVersions[r.Header.Get("Mcp-Protocol-Version")] && jsonExchange(r) && sessionCheckOf(r).live()
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

// answerDirectly serves st when it qualifies and reports whether it did.
func (h *Handler) answerDirectly(w http.ResponseWriter, r *http.Request, st *callState) bool {
	if !st.direct {
		return false
	}
	if st.modern != "" { // no session: the request itself was checked (direct_modern.go)
		if !jsonExchange(r) {
			return false
		}
	} else if !h.directSession(r) {
		return false
	}
	reg := h.tools()
	tool := reg.engine.Lookup(st.name)
	if tool == nil || tool.Approval != nil {
		return false
	}
	// A modern client cannot be asked anything while a call runs, and an
	// input bound to a header is checked by mcp-go.
	if st.modern != "" && (tool.Interactive || reg.headerBound[tool.Name]) {
		return false
	}
	ctx := r.Context()
	var peer *directPeer
	if tool.Interactive { // direct_peer.go
		if peer = h.directPeerFor(w, r); peer == nil {
			return false
		}
		ctx = pipeline.WithPeer(ctx, peer)
	}
	args := st.args
	if args == nil {
		args = map[string]any{}
	}
	telemetry.DirectCalls.Inc()
	// A Canonical result (a cache hit of a source's result) or an Encoded
	// one (a DB tool's cache hit) is written as the bytes it is (for a
	// modern client, with what mcp-go adds spliced in); any other is
	// encoded here, as mcp-go would.
	res, raw, perr := h.callTool(ctx, tool.Name, args, requestInfo(ctx, st), true)
	if res != nil && perr == nil {
		if st.modern != "" {
			h.decorateModern(res)
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
		msg, _ = json.Marshal(struct {
			JSONRPC string                   `json:"jsonrpc"`
			ID      json.RawMessage          `json:"id"`
			Error   *mcp.JSONRPCErrorDetails `json:"error"`
		}{"2.0", st.rawID, errorObject(perr)})
		msg = append(msg, '\n')
	} else {
		msg = resultMessage(st.rawID, raw)
	}
	if peer != nil && peer.answer(json.RawMessage(msg)) {
		return true // the answer became an event stream
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(msg)
	return true
}

// resultMessage is the JSON-RPC response carrying result, as
// json.Encoder writes it (id HTML-escaped, a newline at the end), put
// together without encoding/json going over the result again: it was
// encoded by json.Marshal (compact, HTML-escaped) here or when cached.
func resultMessage(id, result json.RawMessage) []byte {
	var b bytes.Buffer
	b.Grow(len(result) + len(id) + 40)
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	json.HTMLEscape(&b, id)
	b.WriteString(`,"result":`)
	b.Write(result)
	b.WriteString("}\n")
	return b.Bytes()
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
