package openapi

import (
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// namesSpec has a parameter in every location whose wire names an
// argument chooses: an exploded form object in the query and in a cookie,
// a deepObject, a matrix path object, a raw Cookie header, JSON and form
// bodies; and a header the document spells in lower case on one operation.
const namesSpec = `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
 "paths": {
  "/orders": {
   "get": {"operationId": "listOrders", "parameters": [
     {"name": "filter", "in": "query", "style": "form", "explode": true, "schema": {"type": "object"}},
     {"name": "tenant", "in": "query", "schema": {"type": "string"}},
     {"name": "deep", "in": "query", "style": "deepObject", "schema": {"type": "object"}},
     {"name": "prefs", "in": "cookie", "style": "form", "explode": true, "schema": {"type": "object"}},
     {"name": "X-Tenant-Id", "in": "header", "schema": {"type": "string"}}],
    "responses": {"200": {"description": "ok"}}},
   "post": {"operationId": "createOrder", "parameters": [{"name": "tenant", "in": "query", "schema": {"type": "string"}}],
    "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}},
    "responses": {"200": {"description": "ok"}}}},
  "/forms": {"post": {"operationId": "submitForm",
    "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": {"type": "object"}}}},
    "responses": {"200": {"description": "ok"}}}},
  "/legacy": {"get": {"operationId": "legacy", "parameters": [
     {"name": "x-tenant-id", "in": "header", "schema": {"type": "string"}},
     {"name": "Cookie", "in": "header", "schema": {"type": "string"}}],
    "responses": {"200": {"description": "ok"}}}},
  "/items/{sel}": {"get": {"operationId": "getItem", "parameters": [
     {"name": "sel", "in": "path", "required": true, "style": "matrix", "explode": true, "schema": {"type": "object"}}],
    "responses": {"200": {"description": "ok"}}}}}}`

// namesTools loads namesSpec against srv with `set tenant acme`,
// `set X-Tenant-Id acme` and two credentials: a query key and a cookie.
func namesTools(t *testing.T, srv *recorder) map[string]*pipeline.Tool {
	t.Helper()
	spec := filepath.Join(t.TempDir(), "spec.json")
	writeSpec(t, spec, namesSpec)
	tools, _, err := Tools(load(t, spec), Config{BaseURL: srv.URL,
		Set: map[string]string{"tenant": "acme", "X-Tenant-Id": "acme"},
		Credentials: []upstream.Credential{
			upstream.APIKey{In: "query", Name: "api_key", Value: "gateway-key"},
			upstream.APIKey{In: "cookie", Name: "session", Value: "gateway-sid"},
		}})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*pipeline.Tool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	return byName
}

// TestArgumentsCannotProduceGatewayNames: an argument whose wire form
// would carry a name the gateway sets (a `set` parameter's or a
// credential's), in any location and in any of the spellings parsers take
// for it, is refused with -32000 and nothing reaches the upstream. On the
// code before this check, an exploded object sent ?tenant=other before the
// fixed tenant (frameworks read the first), and a query key or cookie of a
// credential's name was dropped but the call went on.
func TestArgumentsCannotProduceGatewayNames(t *testing.T) {
	srv := newRecorder(t, jsonAnswer(`{}`))
	tools := namesTools(t, srv)
	for _, tc := range []struct{ tool, args, name string }{
		{"listOrders", `{"filter": {"tenant": "other", "color": "red"}}`, `query name "tenant"`},
		{"listOrders", `{"filter": {"TENANT": "other"}}`, `"TENANT"`},
		{"listOrders", `{"filter": {" tenant": "other"}}`, `" tenant"`},
		{"listOrders", `{"filter": {"tenant[id]": "other"}}`, `"tenant[id]"`},
		{"listOrders", `{"filter": {"x_tenant_id": "other"}}`, `"x_tenant_id"`},
		{"listOrders", `{"filter": {"api_key": "guess"}}`, `"api_key", which a credential sets`},
		{"listOrders", `{"filter": {"Api-Key": "guess"}}`, `"Api-Key"`},
		{"listOrders", `{"prefs": {"session": "guess", "theme": "dark"}}`, `cookie name "session"`},
		{"listOrders", `{"prefs": {"tenant": "other"}}`, `cookie name "tenant"`},
		{"legacy", `{"Cookie": "session =guess"}`, `cookie name "session "`},
		{"legacy", `{"Cookie": "theme=dark; Tenant=other"}`, `" Tenant"`},
		{"getItem", `{"sel": {"tenant": "other"}}`, `path name "tenant"`},
		{"createOrder", `{"body": {"tenant": "other", "item": 1}}`, `body field name "tenant"`},
		{"submitForm", `{"body": {"api_key": "guess"}}`, `body field name "api_key"`},
	} {
		before := srv.count()
		_, err := call(t, tools[tc.tool], tc.args, nil)
		var pe *pipeline.Error
		if !asError(err, &pe) || pe.Code != pipeline.CodeStageFailed || pe.Stage != pipeline.StageValidation || !strings.Contains(pe.Message, tc.name) {
			t.Errorf("%s %s: %v, want an input validation error naming %s", tc.tool, tc.args, err, tc.name)
		}
		if srv.count() != before {
			t.Errorf("%s %s: the upstream received %+v", tc.tool, tc.args, srv.last(t))
		}
	}

	// Names of their own go through: a deepObject's keys are its own
	// ("deep[tenant]"), and other keys and cookies are the caller's.
	if _, err := call(t, tools["listOrders"], `{"filter": {"color": "red"}, "deep": {"tenant": "x"}, "prefs": {"theme": "dark"}}`, nil); err != nil {
		t.Fatal(err)
	}
	got := srv.last(t)
	q, _ := url.ParseQuery(got.RawQuery)
	if strings.Join(q["tenant"], ",") != "acme" || q.Get("api_key") != "gateway-key" || q.Get("color") != "red" || q.Get("deep[tenant]") != "x" {
		t.Errorf("query %q", got.RawQuery)
	}
	if c := got.Header.Get("Cookie"); c != "theme=dark; session=gateway-sid" {
		t.Errorf("cookies %q", c)
	}
}

// TestSetCoversHeaderCase: header names fold case, so `set X-Tenant-Id`
// fixes the header of an operation that spells it x-tenant-id: it is no
// input, and the upstream sees the fixed value. Before, the lower-case
// header stayed an input and the caller chose the tenant.
func TestSetCoversHeaderCase(t *testing.T) {
	srv := newRecorder(t, jsonAnswer(`{}`))
	tools := namesTools(t, srv)
	legacy := tools["legacy"]
	if strings.Contains(strings.ToLower(string(legacy.InputSchema)), "tenant") {
		t.Errorf("the fixed header is an input: %s", legacy.InputSchema)
	}
	if _, err := call(t, legacy, `{"x-tenant-id": "other"}`, nil); err == nil || !strings.Contains(err.Error(), `unknown input "x-tenant-id"`) {
		t.Errorf("the header as an argument: %v", err)
	}
	if _, err := call(t, legacy, `{}`, nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.last(t).Header.Values("X-Tenant-Id"); len(got) != 1 || got[0] != "acme" {
		t.Errorf("the upstream saw X-Tenant-Id %q", got)
	}
}

// TestCookieCredentialReplacesTrimmedName: cookie parsers trim names, so a
// "session =x" pair is a session cookie to them; the cookie credential
// drops it as it drops "session=x", so the upstream (Go's parser) reads
// the gateway's value only.
func TestCookieCredentialReplacesTrimmedName(t *testing.T) {
	srv := newRecorder(t, jsonAnswer(`{}`))
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("Cookie", "session =caller; theme=dark; session\t=caller2")
	if err := (upstream.APIKey{In: "cookie", Name: "session", Value: "gateway-sid"}).Apply(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	seen := &http.Request{Header: srv.last(t).Header}
	var sessions []string
	for _, c := range seen.Cookies() {
		if c.Name == "session" {
			sessions = append(sessions, c.Value)
		}
	}
	if strings.Join(sessions, ",") != "gateway-sid" {
		t.Errorf("the upstream read session cookies %q from %q", sessions, seen.Header.Get("Cookie"))
	}
}
