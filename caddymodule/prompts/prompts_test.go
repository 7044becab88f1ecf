package prompts

import (
	"context"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/pipeline"
)

// access allows the prompts it names.
type access map[string]bool

func (a access) Allowed(_ context.Context, _ pipeline.Authorizer, name string) bool { return a[name] }
func (access) Fail(context.Context, *pipeline.Error)                                {}

// TestFilterAndComplete: a caller sees, and completes, only the declared
// prompts it may get; a prompt not declared here (a source's) passes.
func TestFilterAndComplete(t *testing.T) {
	s := New([]*pipeline.Prompt{
		{Name: "open", Arguments: []pipeline.PromptArgument{{Name: "lang", Enum: []string{"go", "rust", "python"}}}},
		{Name: "secret"},
	}, access{"open": true})
	got := s.Filter(context.Background(), []mcp.Prompt{{Name: "open"}, {Name: "secret"}, {Name: "up_hello"}})
	var listed []string
	for _, p := range got {
		listed = append(listed, p.Name)
	}
	if !slices.Equal(listed, []string{"open", "up_hello"}) {
		t.Errorf("listed %v", listed)
	}
	if v, ok := s.Complete(context.Background(), "open", "lang", "r"); !ok || !slices.Equal(v, []string{"rust"}) {
		t.Errorf("complete open: %v %v", v, ok)
	}
	if _, ok := s.Complete(context.Background(), "secret", "x", ""); ok {
		t.Error("a prompt the caller may not get completes")
	}
	if !s.Completable() || !s.Declared("secret") || s.Declared("up_hello") {
		t.Error("Completable or Declared is wrong")
	}
}
