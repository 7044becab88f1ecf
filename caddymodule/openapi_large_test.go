package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// largeSpec writes an OpenAPI 3.1 document of n GET operations, each with a
// path and a query parameter, as small as a document of that size can be:
// the test is about the registry, not about parsing (sources/openapi's
// TestGitHubSpec parses a real 1,186-operation document).
func largeSpec(t *testing.T, n int) string {
	t.Helper()
	paths := make(map[string]any, n)
	for i := range n {
		paths[fmt.Sprintf("/area%d/items/{id}", i)] = map[string]any{"get": map[string]any{
			"operationId": fmt.Sprintf("getItem%d", i),
			"description": fmt.Sprintf("Item %d of area %d: <b>&amp;</b> \"quoted\" \\ \u2028 é", i, i),
			"parameters": []any{
				map[string]any{"name": "id", "in": "path", "required": true, "schema": map[string]any{"type": "integer"}},
				map[string]any{"name": "q", "in": "query", "schema": map[string]any{"type": "string"}},
			},
			"responses": map[string]any{"200": map[string]any{"description": "the item"}},
		}}
	}
	b, err := json.Marshal(map[string]any{
		"openapi": "3.1.0",
		"info":    map[string]any{"title": "large", "version": "1"},
		"paths":   paths,
	})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "large.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOpenAPILargeRegistry: a 1,200-operation source through Caddy:
// tools/list (every page, following cursors) lists each tool once, and
// calls across the registry reach their own operation with their
// arguments.
func TestOpenAPILargeRegistry(t *testing.T) {
	const n = 1200
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"path": r.URL.Path, "q": r.URL.Query().Get("q")})
	}))
	t.Cleanup(api.Close)

	start := time.Now()
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source big openapi %s {
			base_url %s
			retries 0
		}
	}
}`, largeSpec(t, n), api.URL))
	t.Logf("Caddy loaded the %d-operation document in %v", n, time.Since(start))

	s := g.rawSession(t, "2025-06-18")
	seen := map[string]int{}
	pages := 0
	for cursor := ""; ; pages++ {
		params := "{}"
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		resp, _ := s.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":%s}`, 1000+pages, params))
		if resp.Error != nil {
			t.Fatalf("tools/list: %+v", resp.Error)
		}
		var page struct {
			Tools []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(resp.Result, &page); err != nil {
			t.Fatal(err)
		}
		for _, tl := range page.Tools {
			seen[tl.Name]++
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
		if pages > n {
			t.Fatal("tools/list: the cursors do not end")
		}
	}
	t.Logf("tools/list: %d tools in %d page(s)", len(seen), pages+1)
	if len(seen) != n {
		t.Errorf("tools/list: %d distinct tools, want %d", len(seen), n)
	}
	for i := range n {
		if name := fmt.Sprintf("big_getItem%d", i); seen[name] != 1 {
			t.Errorf("tool %s listed %d times, want once", name, seen[name])
		}
	}

	for _, i := range []int{0, 1, n / 2, n - 1} {
		r := s.call(t, fmt.Sprintf("big_getItem%d", i), map[string]any{"id": i * 7, "q": "a b"})
		if r.Error != nil {
			t.Errorf("call %d: %+v", i, r.Error)
			continue
		}
		want := fmt.Sprintf(`{\"path\":\"/area%d/items/%d\",\"q\":\"a b\"}`, i, i*7)
		if !strings.Contains(string(r.Result), want) {
			t.Errorf("call %d: result %s, want the upstream's %s", i, r.Result, want)
		}
	}
}
