package caddymodule

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
)

// TestDirectToolsListMatchesMCPGo: a plain tools/list is answered by the
// direct path with the bytes mcp-go writes for the same list (asked with
// _meta, which only mcp-go answers): an OpenAPI source's tools with their
// schemas and aliases left out, and per caller the tools its auth allows.
func TestDirectToolsListMatchesMCPGo(t *testing.T) {
	up := newPetsUpstream(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source pets openapi ../sources/openapi/testdata/petstore.yaml {
			base_url %s/v1
		}
	}
}`, up.URL))
	for _, version := range []string{"2025-03-26", "2025-11-25"} {
		s := g.rawSession(t, version)
		compareLists(t, version, func(body string) rpcResponse { r, _ := s.post(t, body); return r })
	}
}

// TestDirectToolsListFiltersByCaller: with auth, each caller's direct list
// is mcp-go's list for that caller.
func TestDirectToolsListFiltersByCaller(t *testing.T) {
	t.Setenv("EDGEMCP_AUTH_TEST_KEY", authAPIKey)
	idp := newTestIdP(t)
	ga := startGateway(t, authCaddyfile(t, idp, true))
	reader := idp.token(t, "alice", "mcp:use customers:read", map[string]any{"role": "user"}, time.Hour)
	admin := idp.token(t, "root", "mcp:use", map[string]any{"role": "admin"}, time.Hour)
	for _, h := range []map[string]string{
		{"Authorization": "Bearer " + reader},
		{"Authorization": "Bearer " + admin},
		{"Authorization": "Bearer " + reader, "X-API-Key": authAPIKey},
	} {
		s := authSession(t, ga, "2025-06-18", h)
		compareLists(t, "auth", func(body string) rpcResponse { r, _ := s.postWith(t, body, h); return r })
	}
}

func compareLists(t *testing.T, name string, post func(body string) rpcResponse) {
	t.Helper()
	for _, id := range []string{`7`, `"list-1"`} {
		before := directListCount()
		plain := post(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`)
		empty := post(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{}}`)
		if directListCount() != before+2 {
			t.Fatalf("%s: the plain lists did not take the direct path", name)
		}
		viaMCPGo := post(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{"_meta":{}}}`)
		if directListCount() != before+2 {
			t.Fatalf("%s: the _meta list took the direct path", name)
		}
		if plain.Status != 200 || len(plain.Result) < 20 || !bytes.Equal(plain.Result, viaMCPGo.Result) || !bytes.Equal(empty.Result, viaMCPGo.Result) ||
			fmt.Sprint(plain.ID) != fmt.Sprint(viaMCPGo.ID) || plain.Status != viaMCPGo.Status {
			t.Errorf("%s id %s:\n direct %d %v %.300s\n mcp-go %d %v %.300s", name, id, plain.Status, plain.ID, plain.Result, viaMCPGo.Status, viaMCPGo.ID, viaMCPGo.Result)
		}
		if bytes.Contains(plain.Result, []byte(`"showPetById"`)) {
			t.Errorf("%s: an alias is listed", name)
		}
	}
}

// TestDirectToolsListDeclines: what the direct path leaves to mcp-go,
// including everything mcp-go refuses (no or a forged session, a cursor it
// cannot read), so that both paths refuse the same requests.
func TestDirectToolsListDeclines(t *testing.T) {
	up := newPetsUpstream(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source pets openapi ../sources/openapi/testdata/petstore.yaml {
			base_url %s/v1
		}
	}
}`, up.URL))
	s := g.rawSession(t, "2025-11-25")
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, tt := range []struct {
		name, body string
		header     map[string]string
		refused    bool // mcp-go answers with an error or a 4xx
	}{
		{"no session", list, map[string]string{"Mcp-Session-Id": ""}, true},
		{"forged session", list, map[string]string{"Mcp-Session-Id": "forged"}, true},
		{"stateless protocol", list, map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, true}, // it wants _meta fields
		{"no protocol header", list, map[string]string{"Mcp-Protocol-Version": ""}, false},
		{"event stream only", list, map[string]string{"Accept": "text/event-stream"}, false},
		{"not JSON", list, map[string]string{"Content-Type": "text/plain"}, true},
		{"cursor and _meta", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"bm90IGEgbmFtZQ==","_meta":{}}}`, nil, false},
		{"cursor not a string", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":7}}`, nil, true},
		{"bad cursor", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"%%%"}}`, nil, true},
		{"_meta", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":"p"}}}`, nil, false},
		{"float id", `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, nil, false},
		{"escaped id", `{"jsonrpc":"2.0","id":"<a>","method":"tools/list"}`, nil, false},
		{"no id", `{"jsonrpc":"2.0","method":"tools/list"}`, nil, false},
		{"old jsonrpc", `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, nil, true},
	} {
		before := directListCount()
		r, _ := s.postWith(t, tt.body, tt.header)
		if directListCount() != before {
			t.Errorf("%s: answered by the direct path", tt.name)
		}
		if refused := r.Status >= 400 || r.Error != nil; refused != tt.refused {
			t.Errorf("%s: mcp-go answered %d %+v, want refused=%v", tt.name, r.Status, r.Error, tt.refused)
		}
	}
}

// TestDirectToolsListLargeSpec: the same bytes for a 1,200-tool source,
// whose descriptions hold what JSON encoding escapes, listed in pages: the
// direct path answers every page, following its own nextCursor, with the
// bytes mcp-go writes for the same cursor (asked with _meta); a cursor
// past the last tool or between two names too.
func TestDirectToolsListLargeSpec(t *testing.T) {
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source big openapi %s {
			base_url http://127.0.0.1:9/
		}
	}
}`, largeSpec(t, 1200)))
	s := g.rawSession(t, "2025-11-25")
	compareLists(t, "large", func(body string) rpcResponse { r, _ := s.post(t, body); return r })
	r, _ := s.post(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	var page struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor string            `json:"nextCursor"`
	}
	if err := json.Unmarshal(r.Result, &page); err != nil || len(page.Tools) != fastpath.PageSize || page.NextCursor == "" {
		t.Fatalf("first page: %d tools, cursor %q (%v), want %d and a cursor", len(page.Tools), page.NextCursor, err, fastpath.PageSize)
	}
	cursors := []string{
		base64.StdEncoding.EncodeToString([]byte("getItem5")),  // between two names
		base64.StdEncoding.EncodeToString([]byte("zzz")),       // past the last
		base64.StdEncoding.EncodeToString([]byte("getItem99")), // a name
		"",
	}
	listed := 0
	for cursor := page.NextCursor; cursor != ""; {
		cursors = append(cursors, cursor)
		before := directListCount()
		r, _ := s.post(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"`+cursor+`"}}`)
		if directListCount() != before+1 {
			t.Fatalf("cursor %q: not answered by the direct path", cursor)
		}
		page.NextCursor = ""
		if err := json.Unmarshal(r.Result, &page); err != nil {
			t.Fatal(err)
		}
		listed += len(page.Tools)
		cursor = page.NextCursor
	}
	if listed != 1200-fastpath.PageSize {
		t.Errorf("the later pages listed %d tools, want %d", listed, 1200-fastpath.PageSize)
	}
	for _, cursor := range cursors {
		direct, _ := s.post(t, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"`+cursor+`"}}`)
		viaMCPGo, _ := s.post(t, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"`+cursor+`","_meta":{}}}`)
		if direct.Status != 200 || !bytes.Equal(direct.Result, viaMCPGo.Result) {
			t.Errorf("cursor %q:\n direct %d %.300s\n mcp-go %d %.300s", cursor, direct.Status, direct.Result, viaMCPGo.Status, viaMCPGo.Result)
		}
	}
}
