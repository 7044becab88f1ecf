package caddymodule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// TestDirectPathPassesCachedSourceResults: an OpenAPI source's cached
// result is written by the direct path as the cache holds it, and the
// answer is the same bytes mcp-go's dispatcher writes for the same call
// (with _meta, which sends it there), on the miss that fills the entry
// and on the hits after it.
func TestDirectPathPassesCachedSourceResults(t *testing.T) {
	up := newPetsUpstream(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source pets openapi ../sources/openapi/testdata/petstore.yaml {
			base_url %s/v1
			exclude getPhoto
			retries 0
			cache 1h
		}
	}
}`, up.URL))
	for _, version := range []string{"2025-03-26", "2025-11-25"} {
		s := g.rawSession(t, version)
		for i, id := range []string{"7", "a<b>&é\u2028", "0"} {
			pet := id + "-" + version // each session's first call is a miss
			if id == "0" {
				pet = id
			}
			args, _ := json.Marshal(map[string]any{"petId": pet})
			body := func(meta string) string {
				return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"pets_showPetById","arguments":%s%s}}`, i, args, meta)
			}
			sent := up.requests()
			before := directCount()
			miss, _ := s.post(t, body(""))
			hit, _ := s.post(t, body(""))
			if directCount() != before+2 {
				t.Fatalf("%s: the plain requests did not take the direct path", id)
			}
			viaMCPGo, _ := s.post(t, body(`,"_meta":{}`))
			if directCount() != before+2 {
				t.Fatalf("%s: the _meta request took the direct path", id)
			}
			if id == "0" { // a 404: an error, never cached
				if miss.Error == nil || hit.Error == nil || viaMCPGo.Error == nil || *miss.Error != *viaMCPGo.Error {
					t.Errorf("404: %+v / %+v", miss.Error, viaMCPGo.Error)
				}
				continue
			}
			if got := up.requests() - sent; got != 1 {
				t.Errorf("%s: %d requests reached the upstream, want 1 (then hits)", id, got)
			}
			if len(hit.Result) == 0 || !bytes.Equal(miss.Result, viaMCPGo.Result) || !bytes.Equal(hit.Result, viaMCPGo.Result) {
				t.Errorf("%s %s:\n miss   %s\n hit    %s\n mcp-go %s", version, id, miss.Result, hit.Result, viaMCPGo.Result)
			}
		}
	}
}
