package discovery

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
)

// TestLimitArg: search_tools' limit is a whole number from 1 to
// maxSearchLimit, defaulting to defaultSearchLimit.
func TestLimitArg(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want int
		ok   bool
	}{
		{nil, defaultSearchLimit, true},
		{float64(3), 3, true},
		{json.Number("50"), 50, true},
		{json.Number("51"), 0, false},
		{float64(2.5), 0, false},
		{float64(0), 0, false},
		{"5", 0, false},
	} {
		args := map[string]any{}
		if tc.v != nil {
			args["limit"] = tc.v
		}
		got, perr := limitArg(args)
		if (perr == nil) != tc.ok || got != tc.want {
			t.Errorf("limitArg(%v) = %d, %v", tc.v, got, perr)
		}
	}
}

// TestClipRunes: a long description is cut at a rune, marked.
func TestClipRunes(t *testing.T) {
	if got := clipRunes("héllo wörld", 7); got != "héllo…" {
		t.Errorf("clipRunes = %q", got)
	}
	if got := clipRunes("short", 7); got != "short" {
		t.Errorf("clipRunes = %q", got)
	}
}

// TestReserve: a tool named like a meta-tool is refused, naming its
// origin; a meta-tool's name among aliases is dropped from a copy.
func TestReserve(t *testing.T) {
	declared := &pipeline.Tool{Name: MetaSearch}
	if err := Reserve([]*pipeline.Tool{declared}, []*pipeline.Tool{declared}); err == nil {
		t.Error("a declared search_tools is accepted")
	}
	aliases := []string{"up.call_tool", MetaCall}
	sourced := &pipeline.Tool{Name: "up_call", Source: "up", Aliases: aliases}
	if err := Reserve([]*pipeline.Tool{sourced}, nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sourced.Aliases, []string{"up.call_tool"}) || len(aliases) != 2 || aliases[1] != MetaCall {
		t.Errorf("aliases %v (original %v)", sourced.Aliases, aliases)
	}
	var x *Index
	if x.IsMeta(MetaSearch) {
		t.Error("a version without an Index has meta-tools")
	}
}
