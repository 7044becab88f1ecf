package sourcetools

import (
	"slices"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
)

func tools(names ...string) []*pipeline.Tool {
	out := make([]*pipeline.Tool, len(names))
	for i, n := range names {
		out[i] = &pipeline.Tool{Name: n}
	}
	return out
}

func names(ts []*pipeline.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// TestSelect: disable takes any name a tool answers to, include and
// exclude match the name or the original, and every kept tool gets the
// aliases of its source and prefix.
func TestSelect(t *testing.T) {
	s := &Source{Name: "shop", Namespace: "store", Disable: []string{"item0", "shop.item1", "store_item2", "nothing"},
		Exclude: []string{"item4"}}
	got := s.Select(tools("store_item0", "store_item1", "store_item2", "store_item3", "store_item4"), nil)
	if !slices.Equal(names(got), []string{"store_item3"}) {
		t.Fatalf("kept %v", names(got))
	}
	want := []string{"shop.item3", "shop/item3", "item3", "store.item3", "store/item3"}
	if !slices.Equal(got[0].Aliases, want) {
		t.Errorf("aliases %v, want %v", got[0].Aliases, want)
	}
	inc := &Source{Name: "inc", Namespace: "inc", Include: []string{"item1?"}}
	if got := inc.Select(tools("inc_item1", "inc_item10", "inc_item2"), nil); !slices.Equal(names(got), []string{"inc_item10"}) {
		t.Errorf("include kept %v", names(got))
	}
	bare := &Source{Name: "bare"}
	if got := bare.Select(tools("item0"), nil); !slices.Equal(got[0].Aliases, []string{"bare.item0", "bare/item0"}) {
		t.Errorf("prefix off: aliases %v", got[0].Aliases)
	}
}

// TestCheckNames: a source tool may not take a declared tool's name, nor
// another source's.
func TestCheckNames(t *testing.T) {
	a := &pipeline.Tool{Name: "x", Source: "a"}
	b := &pipeline.Tool{Name: "x", Source: "b"}
	if err := CheckNames(tools("x"), []*pipeline.Tool{a}); err == nil {
		t.Error("a source tool with a declared tool's name is accepted")
	}
	if err := CheckNames(nil, []*pipeline.Tool{a, b}); err == nil {
		t.Error("two sources' tools with one name are accepted")
	}
	if err := CheckNames(tools("y"), []*pipeline.Tool{a}); err != nil {
		t.Error(err)
	}
}
