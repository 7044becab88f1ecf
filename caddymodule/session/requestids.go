package session

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// The ids of the requests the gateway sends a client in a session
// (elicitation/create for an approval or relayed from an upstream,
// sampling/createMessage, roots/list, ping) cannot be guessed
// (docs/security.md, "Session ids"). mcp-go numbers them with one counter
// for the whole server, so whoever could post into a session could answer
// a pending question by trying small numbers. On the way out each id n
// becomes the string "<n>.<tag>", tag = the first 16 bytes of
// HMAC-SHA256(session key, serverRequestContext || session id || n),
// base64url; on the way in an answer's id must open for its session, and
// mcp-go gets n back. Nothing is stored: the answer reaches the node that
// asked (the session's), which holds the keys.

const serverRequestContext = "edgemcp server request v1\x00"

// RequestIDs seals and opens the ids, with the session keys (the first
// seals, every one opens).
type RequestIDs struct{ keys [][]byte }

// RequestIDs seals and opens the ids of requests to the client with the
// session keys.
func (s *IDs) RequestIDs() RequestIDs { return RequestIDs{s.keys} }

func (p RequestIDs) tag(key []byte, session string, n int64) []byte {
	mac := hmac.New(sha256.New, key)
	in := append([]byte(serverRequestContext), binary.AppendUvarint(nil, uint64(len(session)))...)
	in = append(in, session...)
	mac.Write(binary.AppendVarint(in, n))
	return mac.Sum(nil)[:16]
}

// seal is the id the client sees for request n of session.
func (p RequestIDs) seal(session string, n int64) string {
	return strconv.FormatInt(n, 10) + "." + b64.EncodeToString(p.tag(p.keys[0], session, n))
}

// open returns the number of a sealed id of session.
func (p RequestIDs) open(session, id string) (int64, bool) {
	num, t, ok := strings.Cut(id, ".")
	if !ok || len(t) != b64.EncodedLen(16) {
		return 0, false
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != num {
		return 0, false
	}
	tag, err := strictB64.DecodeString(t)
	if err != nil {
		return 0, false
	}
	valid := false
	for _, k := range p.keys {
		if hmac.Equal(tag, p.tag(k, session, n)) {
			valid = true
		}
	}
	return n, valid
}

// mcpRequestEvent is how mcp-go writes a request to the client on a
// stream: one event, the id (a number) first after jsonrpc, then params or
// method (mcp.JSONRPCRequest's field order). A response has result or
// error there, a notification no id.
var mcpRequestEvent = []byte(`event: message` + "\n" + `data: {"jsonrpc":"2.0","id":`)

// SealEvent rewrites the id of the request in one event mcp-go wrote;
// anything else is returned as it is.
func (p RequestIDs) SealEvent(b []byte, session string) []byte {
	if !bytes.HasPrefix(b, mcpRequestEvent) {
		return b
	}
	start := len(mcpRequestEvent)
	end := start
	for end < len(b) && b[end] >= '0' && b[end] <= '9' {
		end++
	}
	rest := b[end:]
	if end == start || !(bytes.HasPrefix(rest, []byte(`,"params":`)) || bytes.HasPrefix(rest, []byte(`,"method":`))) {
		return b
	}
	n, err := strconv.ParseInt(string(b[start:end]), 10, 64)
	if err != nil {
		return b
	}
	out := make([]byte, 0, len(b)+32)
	out = append(out, b[:start]...)
	out = strconv.AppendQuote(out, p.seal(session, n))
	return append(out, rest...)
}

// OpenAnswer checks a POST body that answers a server request (a JSON-RPC
// response: an id, a result or an error, no method) in the session of r,
// and returns the body mcp-go gets, with the number the id stands for. An
// id that does not open for the session is answered as mcp-go answers an
// id it never sent (400) and nil is returned. Any other body is returned
// as it is.
func (s *IDs) OpenAnswer(w http.ResponseWriter, r *http.Request, body []byte) []byte {
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	c := CheckOf(r)
	if c == nil || json.Unmarshal(body, &msg) != nil || msg.Method != "" || len(msg.ID) == 0 || (msg.Result == nil && msg.Error == nil) {
		return body
	}
	var sealed string
	n, ok := int64(0), json.Unmarshal(msg.ID, &sealed) == nil
	if ok {
		n, ok = s.RequestIDs().open(c.id, sealed)
	}
	if !ok {
		http.Error(w, "No pending sampling request found for the given request ID", http.StatusBadRequest)
		return nil
	}
	out := map[string]any{"jsonrpc": msg.JSONRPC, "id": n}
	if msg.Error != nil {
		out["error"] = msg.Error
	} else {
		out["result"] = msg.Result
	}
	b, err := json.Marshal(out)
	if err != nil {
		return body
	}
	return b
}
