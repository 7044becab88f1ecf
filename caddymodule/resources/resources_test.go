package resources

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/pipeline"
)

// TestVars: a template's variables, none for a plain URI, and the URIs
// refused (spaces, no scheme, a broken template).
func TestVars(t *testing.T) {
	for uri, want := range map[string][]string{
		"docs://{id}":          {"id"},
		"file:///notes":        {},
		"db://t/{table}/{row}": {"table", "row"},
	} {
		got, err := Vars(uri)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Vars(%q) = %v, %v; want %v", uri, got, err, want)
		}
	}
	for _, bad := range []string{"", "docs://a b", "notes/{id}", "docs://{id"} {
		if _, err := Vars(bad); err == nil {
			t.Errorf("Vars(%q): no error", bad)
		}
	}
}

// TestContents: JSON types get the result as JSON; any other type takes
// one value, and no row or a null is "not found".
func TestContents(t *testing.T) {
	rows := &pipeline.Rows{Columns: []string{"body"}, Values: [][]any{{"# Notes"}}}
	c, perr := Contents(&pipeline.Result{Value: rows}, "n://1", "text/markdown")
	if perr != nil || c.(mcp.TextResourceContents).Text != "# Notes" {
		t.Fatalf("markdown: %v, %v", c, perr)
	}
	c, perr = Contents(&pipeline.Result{Value: rows}, "n://1", "application/vnd.x+json")
	if perr != nil || c.(mcp.TextResourceContents).Text != `[{"body":"# Notes"}]` {
		t.Fatalf("json: %v, %v", c, perr)
	}
	if _, perr := Contents(&pipeline.Result{Value: &pipeline.Rows{Columns: []string{"body"}}}, "n://1", "text/plain"); perr == nil || perr.Code != mcp.RESOURCE_NOT_FOUND {
		t.Errorf("no row: %v", perr)
	}
	if _, perr := Contents(&pipeline.Result{Value: json.RawMessage(`null`)}, "n://1", "text/plain"); perr == nil || perr.Code != mcp.RESOURCE_NOT_FOUND {
		t.Errorf("null: %v", perr)
	}
	two := &pipeline.Rows{Columns: []string{"a", "b"}, Values: [][]any{{1, 2}}}
	if _, perr := Contents(&pipeline.Result{Value: two}, "n://1", "text/plain"); perr == nil || perr.Stage != pipeline.StageResponse {
		t.Errorf("two columns: %v", perr)
	}
}

// TestNilSet: a handler not provisioned has no resources.
func TestNilSet(t *testing.T) {
	var s *Set
	if len(s.All()) != 0 || s.Completable() || s.Static("x://y") != nil {
		t.Error("a nil Set is not empty")
	}
}
