package caddymodule

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestSourceSelection: prefix renames a source's namespace or drops it,
// disable takes names in any of the forms a tool answers to, include and
// exclude keep tools by name patterns, and every kept tool answers to
// <source>.<original>, <source>/<original>, <prefix>.<original> and its
// original name, on the direct path and through mcp-go alike.
func TestSourceSelection(t *testing.T) {
	resetCatalog(t)
	g := startGateway(t, `SITE {
	mcp /mcp {
		source shop shelf_test 5 {
			prefix store
			disable item0 shop.item1 store_item2
			exclude item4
		}
		source bare shelf_test 1 {
			prefix off
		}
		source inc shelf_test 12 {
			include item1?
		}
	}
}`)
	s := g.rawSession(t, "2025-06-18")
	r, _ := s.post(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(r.Result, &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"inc_item10", "inc_item11", "item0", "store_item3"}; !slices.Equal(names, want) {
		t.Fatalf("tools: %v, want %v", names, want)
	}
	// item3 is claimed by shop's item3 alone (bare has item0 only).
	for _, name := range []string{"store_item3", "shop.item3", "shop/item3", "store.item3", "store/item3", "item3"} {
		if got := s.call(t, name, map[string]any{}).tool(t); got.Content[0].Text != `{"quantity":null,"tool":"item3"}` {
			t.Errorf("%s (direct path): %+v", name, got)
		}
		// _meta sends the call through mcp-go.
		resp, _ := s.post(t, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"`+name+`","arguments":{},"_meta":{"x":1}}}`)
		if got := resp.tool(t); got.Content[0].Text != `{"quantity":null,"tool":"item3"}` {
			t.Errorf("%s (mcp-go): %+v", name, got)
		}
	}
	for _, gone := range []string{"shop_item0", "store_item0", "store_item1", "store_item2", "store_item4", "shop_item3", "inc_item2"} {
		if r := s.call(t, gone, map[string]any{}); r.Error == nil || r.Error.Code != -32601 {
			t.Errorf("%s: %+v", gone, r.Error)
		}
	}
}

// TestSourceSelectionCollision: two sources whose tools end up with one
// name fail the load, naming both.
func TestSourceSelectionCollision(t *testing.T) {
	resetCatalog(t)
	msg := loadError(t, `SITE {
	mcp /mcp {
		source one shelf_test 2 {
			prefix off
		}
		source two shelf_test 3 {
			prefix off
			disable item0
		}
	}
}`)
	if !strings.Contains(msg, `source "two": its tool "item1" has the name of a tool of source "one"`) {
		t.Errorf("load error: %s", msg)
	}
}
