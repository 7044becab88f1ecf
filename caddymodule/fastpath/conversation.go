package fastpath

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// ConversationMetaKey is the _meta key of a tools/call that names the
// client's conversation. On a protocol without sessions (2026-07-28) it
// is what guardrails across calls key their record on, together with
// the verified caller (pipeline.RequestInfo.Conversation); a session's
// calls are keyed on the session and the key is ignored.
const ConversationMetaKey = "conversationId"

// maxConversationID bounds the id read: the guardrail hashes it, so a
// longer one buys the client nothing.
const maxConversationID = 256

// conversation reads ConversationMetaKey from a call's _meta: a
// non-empty string of at most maxConversationID bytes of valid UTF-8,
// else "". Only a _meta that mentions the key is decoded.
func conversation(meta json.RawMessage) string {
	if len(meta) == 0 || !bytes.Contains(meta, []byte(`"`+ConversationMetaKey+`"`)) {
		return ""
	}
	var m struct {
		ID string `json:"conversationId"`
	}
	if json.Unmarshal(meta, &m) != nil || len(m.ID) > maxConversationID || !utf8.ValidString(m.ID) {
		return ""
	}
	return m.ID
}
