package caddymodule

import (
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
)

// A JSON config is checked at provision as the Caddyfile is at adapt:
// each refusal names the toolset and what is wrong.
func TestValidateToolsets(t *testing.T) {
	base := func(ts ...ToolsetConfig) *Handler {
		return &Handler{Sources: []SourceConfig{{Name: "gh"}}, Toolsets: ts}
	}
	ok := ToolsetConfig{Name: "triage", Paths: []string{"/mcp/triage"}, Sources: []string{"gh"}, Tools: []string{"gh_list_*"}}
	if err := base(ok).validateToolsets(); err != nil {
		t.Fatalf("a valid toolset: %v", err)
	}
	for _, tc := range []struct {
		ts   []ToolsetConfig
		want string
	}{
		{[]ToolsetConfig{{Name: "a/b", Paths: []string{"/a"}, Tools: []string{"*"}}}, `toolset "a/b": a name is 1 to 64`},
		{[]ToolsetConfig{ok, ok}, `toolset "triage" declared twice`},
		{[]ToolsetConfig{{Name: "x", Paths: []string{"/x"}}}, `toolset "x": selects nothing`},
		{[]ToolsetConfig{{Name: "x", Paths: []string{"/x"}, Tools: []string{"[a"}}}, `toolset "x": tools: bad pattern "[a"`},
		{[]ToolsetConfig{{Name: "x", Paths: []string{"/x"}, Sources: []string{"github"}}}, `toolset "x": sources: no source "github"`},
		{[]ToolsetConfig{{Name: "x", Tools: []string{"*"}}}, `toolset "x": no paths`},
		{[]ToolsetConfig{{Name: "x", Paths: []string{"x"}, Tools: []string{"*"}}}, `toolset "x": path "x" does not start with /`},
		{[]ToolsetConfig{ok, {Name: "y", Paths: []string{"/mcp/triage"}, Tools: []string{"*"}}}, `toolset "y": path "/mcp/triage" is toolset "triage"'s too`},
	} {
		err := base(tc.ts...).validateToolsets()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.ts, err, tc.want)
		}
	}
}

// A toolset selects by source and by pattern, both when both are given;
// a declared tool is in no source, whatever its connector is called.
func TestToolsetSelects(t *testing.T) {
	declared := []*pipeline.Tool{{Name: "gh_report", Source: "gh"}, {Name: "greet"}}
	sourced := []*pipeline.Tool{{Name: "gh_list_issues", Source: "gh"}, {Name: "gh_delete_repo", Source: "gh"}, {Name: "files_read", Source: "files"}}
	names := func(ts ToolsetConfig) string {
		var out []string
		for _, t := range ts.toolsetTools(declared, sourced) {
			out = append(out, t.Name)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		ts   ToolsetConfig
		want string
	}{
		{ToolsetConfig{Sources: []string{"gh"}}, "gh_list_issues gh_delete_repo"},
		{ToolsetConfig{Tools: []string{"gh_*"}}, "gh_report gh_list_issues gh_delete_repo"},
		{ToolsetConfig{Sources: []string{"gh"}, Tools: []string{"gh_list_*"}}, "gh_list_issues"},
		{ToolsetConfig{Sources: []string{"gh", "files"}, Tools: []string{"*_read", "gh_list_*"}}, "gh_list_issues files_read"},
		{ToolsetConfig{Tools: []string{"greet"}}, "greet"},
	} {
		if got := names(tc.ts); got != tc.want {
			t.Errorf("%+v selects %q, want %q", tc.ts, got, tc.want)
		}
	}
}
