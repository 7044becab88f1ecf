package caddymodule

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
)

// TestDirectPathPassesCachedDBResults: a DB tool's cached result (stored
// encoded, jsonrpc.EncodeValue) is written by the direct path as the cache holds
// it, and the answer is the same bytes mcp-go's dispatcher writes for the
// same call (with _meta, which sends it there): on the miss that fills the
// entry and the hits after it, for each protocol version, for every type
// the connector normalizes, through an output mapper, and for a stale
// serve with its _meta.
func TestDirectPathPassesCachedDBResults(t *testing.T) {
	cacheSchema(t)
	execSQL(t, testDB(t), `INSERT INTO cache_e2e.items VALUES (3, 'a<b>&é`+"\u2028"+`"}}\n')`)
	var cols []string
	for i, e := range pgTypeExprs {
		cols = append(cols, fmt.Sprintf("%s AS c%02d", e, i))
	}
	dir := scriptFiles(t, map[string]string{"out.js": `export default ({results}) => results.map(r => ({...r, mapped: true}))`})
	dsn, proxy := proxiedPostgres(t)
	tools := fmt.Sprintf(itemTool, "item", "cache 1h") + fmt.Sprintf(itemTool, "short", "cache 1s") + fmt.Sprintf(`
		tool types {
			description "Every type"
			use main
			statement "SELECT %[1]s WHERE {{ inputs.id }} > 0"
			input id int required
			cache 1h
		}
		tool mapped {
			description "An item through an output mapper"
			use main
			statement "SELECT id, name FROM cache_e2e.items WHERE id = {{ inputs.id }}"
			input id int required
			mappers {
				output %[2]s/out.js
			}
			cache 1h
		}`, strings.ReplaceAll(strings.Join(cols, ", "), `"`, `\"`), dir)
	g := startGateway(t, cacheCaddyfile("SITE", dsn, "cache {\n\t\t\tstale_if_error 1h\n\t\t}", tools))

	// same posts a call on the direct path, then with an empty _meta
	// (mcp-go's dispatcher), and fails unless both answers are the same
	// bytes; it returns the direct one.
	same := func(s *rawSession, version, tool string, id int) rpcResponse {
		t.Helper()
		body := func(meta string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"id":%d}%s}}`, id, tool, id, meta)
		}
		before := directCount()
		direct, _ := s.post(t, body(""))
		viaMCPGo, _ := s.post(t, body(`,"_meta":{}`))
		if directCount() != before+1 {
			t.Fatalf("%s %s: %d direct answers, want 1", version, tool, directCount()-before)
		}
		a, b := ages.ReplaceAll(direct.Result, []byte("<age>")), ages.ReplaceAll(viaMCPGo.Result, []byte("<age>"))
		if direct.Error != nil || len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s %s %d: %+v\n direct %s\n mcp-go %s", version, tool, id, direct.Error, a, b)
		}
		return direct
	}
	for i, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
		s := g.rawSession(t, version)
		for _, tool := range []string{"item", "types", "mapped", "short"} {
			for _, id := range []int{1, 3} {
				// Keys differ per version (the id), so the first is a miss.
				same(s, version, tool, id+10*i)
				same(s, version, tool, id+10*i)
				same(s, version, tool, id)
			}
		}
		r := same(s, version, "item", 3)
		text := r.tool(t).rows(t)[0]["name"]
		if text != "a<b>&é\u2028\"}}\\n" { // SQL keeps the backslash
			t.Errorf("%s: name %q", version, text)
		}
		if hasStructured := bytes.Contains(r.Result, []byte(`"structuredContent"`)); hasStructured != (version >= jsonrpc.StructuredSince) {
			t.Errorf("%s: structuredContent %v: %s", version, hasStructured, r.Result)
		}
	}

	// Stale serves, on every version, say so in _meta on both paths.
	proxy.cut()
	for _, version := range []string{"2025-03-26", "2025-11-25"} {
		s := g.rawSession(t, version)
		waitFor(t, "the entry to expire", func() bool { return cacheMeta(t, s.call(t, "short", map[string]any{"id": 3})) != nil })
		if r := same(s, version, "short", 3); cacheMeta(t, r)["status"] != "stale" {
			t.Errorf("%s: stale _meta %s", version, r.Result)
		}
	}
}

var ages = regexp.MustCompile(`"age_seconds":[0-9]+`)
