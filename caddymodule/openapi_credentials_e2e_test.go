package caddymodule

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// tenantSpec has a fixed tenant query parameter and an exploded form
// object beside it, whose keys become query names of their own.
const tenantSpec = `{"openapi": "3.0.3", "info": {"title": "orders", "version": "1"},
 "paths": {"/orders": {"get": {"operationId": "listOrders", "parameters": [
   {"name": "filter", "in": "query", "style": "form", "explode": true, "schema": {"type": "object"}},
   {"name": "tenant", "in": "query", "required": true, "schema": {"type": "string"}}],
  "responses": {"200": {"description": "ok"}}}}}}`

// TestOpenAPISourceTenantHoldsOverObjectKeys: with `set tenant
// {{ auth.claims.tenant }}`, a verified caller of tenant acme who puts
// "tenant" among an exploded object's keys gets -32000 and the upstream
// hears nothing; before, the upstream got ?tenant=globex&tenant=acme, and
// frameworks that read the first value served globex's orders. Other keys
// go through with acme's tenant alone.
func TestOpenAPISourceTenantHoldsOverObjectKeys(t *testing.T) {
	idp := newTestIdP(t)
	var mu sync.Mutex
	var queries []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"tenant": %q}`, r.URL.Query().Get("tenant"))
	}))
	defer up.Close()
	spec := filepath.Join(t.TempDir(), "orders.json")
	writeFile(t, spec, tenantSpec)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		%s
		source shop openapi %s {
			base_url %s
			set tenant {{ auth.claims.tenant }}
		}
	}
}`, idp.defaultAuth(), spec, up.URL))
	acme := idp.token(t, "alice", "", map[string]any{"tenant": "acme"}, time.Hour)
	s := authSession(t, g, "2025-06-18", map[string]string{"Authorization": "Bearer " + acme})
	call := func(args map[string]any) rpcResponse {
		a, _ := json.Marshal(args)
		r, _ := s.postWith(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"shop_listOrders","arguments":%s}}`, a),
			map[string]string{"Authorization": "Bearer " + acme})
		return r
	}
	for _, key := range []string{"tenant", "Tenant", "tenant[]"} {
		r := call(map[string]any{"filter": map[string]any{key: "globex"}})
		if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "set tenant") {
			t.Errorf("filter key %q: %+v %s", key, r.Error, r.Result)
		}
	}
	mu.Lock()
	if len(queries) != 0 {
		t.Errorf("the upstream received %q", queries)
	}
	mu.Unlock()
	if r := call(map[string]any{"filter": map[string]any{"color": "red"}}); r.Error != nil || !strings.Contains(string(r.Result), `\"tenant\": \"acme\"`) {
		t.Errorf("a key of the caller's own: %+v %s", r.Error, r.Result)
	}
	mu.Lock()
	defer mu.Unlock()
	if q, _ := url.ParseQuery(strings.Join(queries, "&")); strings.Join(q["tenant"], ",") != "acme" || q.Get("color") != "red" {
		t.Errorf("the upstream received %q", queries)
	}
}

// TestOpenAPISourceLogsHoldNoCredential: a query-string API key reaches
// no log line at any level, and no caller: not when the upstream cannot be
// reached (Go's transport error names the URL, and the call's cause is
// logged at debug), nor when it answers an error that quotes the request.
func TestOpenAPISourceLogsHoldNoCredential(t *testing.T) {
	const key = "query-key-secret-value-7781"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "upstream failed on "+r.URL.RequestURI())
	}))
	defer echo.Close()
	// {env.X}: the key is not in the config, which Caddy logs at debug
	// (as written, before any placeholder is replaced).
	t.Setenv("EDGEMCP_TEST_QUERY_KEY", key)
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source down openapi ../sources/openapi/testdata/petstore.yaml {
			base_url %s/v1
			credential api_key query api_key {env.EDGEMCP_TEST_QUERY_KEY}
			retries 0
		}
		source echo openapi ../sources/openapi/testdata/petstore.yaml {
			base_url %s/v1
			credential api_key query api_key {env.EDGEMCP_TEST_QUERY_KEY}
			retries 0
		}
	}
}`, closed, echo.URL), withLogFile(logFile))
	s := g.rawSession(t, "2025-06-18")
	for _, tool := range []string{"down_showPetById", "echo_showPetById"} {
		r := s.call(t, tool, map[string]any{"petId": "7"})
		if r.Error == nil || r.Error.Code != -32000 || strings.Contains(r.Error.Message, key) {
			t.Errorf("%s: %+v", tool, r.Error)
		}
	}
	assertLogsClean(t, logFile, []string{key})
}
