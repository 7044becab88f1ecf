package fastpath

import (
	"encoding/json"
	"testing"
)

// TestListEntriesReplace: the entries a source gave text for are written
// as that text, in mcp-go's order; the others stay mcp-go's.
func TestListEntriesReplace(t *testing.T) {
	texts := map[string]json.RawMessage{
		"b": []byte(`{"name":"b","_meta":{"ui":{"resourceUri":"ui://b"}},"inputSchema":{"type":"object"}}`),
	}
	l := &ListEntries{Key: "tools", IDField: "name", Entry: func(id string) json.RawMessage { return texts[id] }}
	got, err := l.replace([]byte(`{"nextCursor":"x","tools":[{"name":"a","annotations":{}},{"name":"b","annotations":{}}]}`))
	want := `{"nextCursor":"x","tools":[{"name":"a","annotations":{}},{"name":"b","_meta":{"ui":{"resourceUri":"ui://b"}},"inputSchema":{"type":"object"}}]}`
	if err != nil || string(got) != want {
		t.Errorf("got %s, %v\nwant %s", got, err, want)
	}
}
