package fastpath

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestConversation: the id is read from _meta only as a bounded string,
// and a _meta of the protocol's fields plus the id is still a plain
// sessionless request (the direct path takes it).
func TestConversation(t *testing.T) {
	for meta, want := range map[string]string{
		``:                         "",
		`{"progressToken":"x"}`:    "",
		`{"conversationId":"c-1"}`: "c-1",
		`{"conversationId":7}`:     "",
		`{"conversationId":""}`:    "",
		`{"conversationId":"` + strings.Repeat("x", 257) + `"}`: "",
		`{"conversationId":"` + strings.Repeat("x", 256) + `"}`: strings.Repeat("x", 256),
		`{"conversationId":"c",`:                                "",
	} {
		if got := conversation(json.RawMessage(meta)); got != want {
			t.Errorf("conversation(%.40s) = %.40q, want %.40q", meta, got, want)
		}
	}
	supported := func(string) bool { return true }
	meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"conversationId":"c-1"}`
	if v := plainSessionlessMeta(json.RawMessage(meta), supported); v != "2026-07-28" {
		t.Errorf("a sessionless _meta with conversationId: %q, want it plain", v)
	}
}
