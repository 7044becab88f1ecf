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
// a deepObject, a matrix path object, a raw Cookie header, JSON, form and
// multipart bodies (a form field styled as an exploded object; multipart
// text, JSON object, array and file parts), a path object that fills the
// template's own query; and a header the document spells in lower case on
// one operation. Two operations cannot be served with namesTools' names:
// their templates' queries send a credential's name and a `set` name from
// a caller's path argument.
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
    "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": {"type": "object"},
      "encoding": {"filter": {"style": "form", "explode": true}}}}},
    "responses": {"200": {"description": "ok"}}}},
  "/uploads": {"post": {"operationId": "upload",
    "requestBody": {"content": {"multipart/form-data": {"schema": {"type": "object", "properties": {
      "meta": {"type": "object"}, "tags": {"type": "array", "items": {"type": "string"}},
      "doc": {"type": "string", "format": "binary"}, "session": {"type": "string", "format": "binary"}}}}}},
    "responses": {"200": {"description": "ok"}}}},
  "/find?{sel}&v=2": {"get": {"operationId": "find", "parameters": [
     {"name": "sel", "in": "path", "required": true, "explode": true, "schema": {"type": "object"}}],
    "responses": {"200": {"description": "ok"}}}},
  "/orgs/{tenant}?tenant={tenant}": {"get": {"operationId": "getOrg", "parameters": [
     {"name": "tenant", "in": "path", "required": true, "schema": {"type": "string"}}],
    "responses": {"200": {"description": "ok"}}}},
  "/keyed?api_key=document-key": {"get": {"operationId": "keyed", "responses": {"200": {"description": "ok"}}}},
  "/declared?api_key={api_key}": {"get": {"operationId": "declared", "parameters": [
     {"name": "api_key", "in": "query", "schema": {"type": "string"}}],
    "responses": {"200": {"description": "ok"}}}},
  "/owned/{who}?tenant={who}": {"get": {"operationId": "owned", "parameters": [
     {"name": "who", "in": "path", "required": true, "schema": {"type": "string"}}],
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
func namesTools(t *testing.T, srv *recorder) (map[string]*pipeline.Tool, Report) {
	t.Helper()
	spec := filepath.Join(t.TempDir(), "spec.json")
	writeSpec(t, spec, namesSpec)
	tools, report, err := Tools(load(t, spec), Config{BaseURL: srv.URL,
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
	return byName, report
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
	tools, _ := namesTools(t, srv)
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
		{"submitForm", `{"body": {"api_key": "guess"}}`, `form field name "api_key"`},
		{"submitForm", `{"body": {"filter": {"tenant": "other"}}}`, `form field name "tenant"`},
		{"submitForm", `{"body": {"filter": {"Session": "guess"}}}`, `form field name "Session"`},
		{"upload", `{"body": {"tenant": "other"}}`, `multipart part name "tenant"`},
		{"upload", `{"body": {"session": "Z3Vlc3M="}}`, `multipart part name "session"`},
		{"upload", `{"body": {"X-Tenant-Id ": ["a", "b"]}}`, `multipart part name "X-Tenant-Id "`},
		{"find", `{"sel": {"tenant": "other"}}`, `query name "tenant"`},
		{"find", `{"sel": {"color": "red", "API_KEY": "guess"}}`, `query name "API_KEY"`},
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

// TestTemplateQueryNames: a path template's own query ("/x?a=1") is
// checked as the parameters are. A literal name the gateway sets leaves
// the operation out, saying why (the document's value would go next to
// the gateway's), as does a `set` name whose value a caller's path
// argument fills; "tenant={tenant}" filled by the `set` itself is served
// with the fixed value, and "api_key={api_key}" of a declared query
// parameter is that parameter's, which the credential's name leaves out:
// the credential's key alone goes. (A name an argument fills in,
// "?{sel}", is refused at the call: TestArgumentsCannotProduceGatewayNames.)
func TestTemplateQueryNames(t *testing.T) {
	srv := newRecorder(t, jsonAnswer(`{}`))
	tools, report := namesTools(t, srv)
	want := map[string]string{
		"GET /keyed?api_key=document-key (keyed)": `its path template sends the query name "api_key", which a credential sets`,
		"GET /owned/{who}?tenant={who} (owned)":   `its path template sends the query name "tenant", which set tenant sets`,
	}
	for _, sk := range report.Skipped {
		if want[sk.Operation] != sk.Reason {
			t.Errorf("skipped %s: %q, want %q", sk.Operation, sk.Reason, want[sk.Operation])
		}
		delete(want, sk.Operation)
	}
	if len(want) > 0 {
		t.Errorf("not skipped: %v", want)
	}
	getOrg := tools["getOrg"]
	if strings.Contains(string(getOrg.InputSchema), "tenant") {
		t.Errorf("the fixed path parameter is an input: %s", getOrg.InputSchema)
	}
	if _, err := call(t, getOrg, `{}`, nil); err != nil {
		t.Fatal(err)
	}
	got := srv.last(t)
	if q, _ := url.ParseQuery(got.RawQuery); got.Path != "/orgs/acme" || strings.Join(q["tenant"], ",") != "acme" {
		t.Errorf("sent %s?%s", got.Path, got.RawQuery)
	}
	if _, err := call(t, tools["declared"], `{}`, nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.last(t); got.RawQuery != "api_key=gateway-key" {
		t.Errorf("sent %s?%s", got.Path, got.RawQuery)
	}
}

// TestSetCoversHeaderCase: header names fold case, so `set X-Tenant-Id`
// fixes the header of an operation that spells it x-tenant-id: it is no
// input, and the upstream sees the fixed value. Before, the lower-case
// header stayed an input and the caller chose the tenant.
func TestSetCoversHeaderCase(t *testing.T) {
	srv := newRecorder(t, jsonAnswer(`{}`))
	tools, _ := namesTools(t, srv)
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
