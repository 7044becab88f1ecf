package caddymodule

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestToolsetTypeScriptSDK: the official TypeScript SDK client at a
// toolset's path lists only the toolset's tools, calls one that needs a
// person's approval (elicitation/create on the toolset's own session, the
// answer accepted), and is refused a tool of the endpoint outside the
// toolset as a tool that does not exist.
func TestToolsetTypeScriptSDK(t *testing.T) {
	g := startGateway(t, approvalCaddyfile(t, `toolset notes {
			tools add-note count-notes
		}`))
	at := *g
	at.URL = g.URL + "/notes"
	run := runSDKApproval(t, &at, "accept", `[
		{"op":"list"},
		{"op":"call","name":"add-note","arguments":{"body":"kq5t0o1s"}},
		{"op":"call","name":"purge-notes","arguments":{}},
		{"op":"call","name":"no-such-tool","arguments":{}},
		{"op":"call","name":"count-notes","arguments":{}}
	]`)
	s := run.Steps
	if len(s) != 5 {
		t.Fatalf("steps %+v", s)
	}
	var tools []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(s[0].Tools, &tools); err != nil {
		t.Fatalf("list: %s: %v", s[0].Tools, err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"add-note", "count-notes"}) {
		t.Errorf("the toolset lists %v, want [add-note count-notes]", names)
	}
	if s[1].Error != nil || s[1].Result == nil || s[1].Result.IsError {
		t.Errorf("approved add-note: %+v %+v", s[1].Error, s[1].Result)
	}
	if len(run.Elicitations) != 1 || !strings.Contains(run.Elicitations[0].Params.Message, "kq5t0o1s") {
		t.Errorf("elicitations %+v, want one for add-note", run.Elicitations)
	}
	outside, unknown := s[2].Error, s[3].Error
	if unknown == nil || unknown.Code != -32601 {
		t.Fatalf("an unknown tool: %+v, want -32601", unknown)
	}
	if outside == nil || outside.Code != unknown.Code || outside.Message != strings.Replace(unknown.Message, "no-such-tool", "purge-notes", 1) {
		t.Errorf("purge-notes, outside the toolset: %+v, want as unknown %+v", outside, unknown)
	}
	if n := s[4].Result; n == nil || len(n.Content) != 1 || !strings.Contains(n.Content[0].Text, `"n":1`) {
		t.Errorf("count-notes after one approved add-note: %+v", n)
	}
}
