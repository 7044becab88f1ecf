package openapi

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/edgemcp/edgemcp/sources/upstream"
)

// objectParamsSpec has an exploded form object in the query and in a
// cookie: each key of the object becomes a query key or cookie of its
// own, so the document cannot say at load which names a caller will send.
const objectParamsSpec = `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
 "paths": {"/search": {"get": {"operationId": "search", "parameters": [
   {"name": "filter", "in": "query", "style": "form", "explode": true, "schema": {"type": "object"}},
   {"name": "prefs", "in": "cookie", "style": "form", "explode": true, "schema": {"type": "object"}}],
   "responses": {"200": {"description": "ok"}}}}}}`

// TestInjectedPartsCannotBeSetAtRunTime: an argument whose keys land on a
// query key or cookie a credential sets is dropped, with a log line that
// names it without its value; the credential's value alone reaches the
// upstream, and the caller's other keys go through.
func TestInjectedPartsCannotBeSetAtRunTime(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "spec.json")
	writeSpec(t, spec, objectParamsSpec)
	srv := newRecorder(t, jsonAnswer(`{}`))
	core, logs := observer.New(zap.DebugLevel)
	tools, _, err := Tools(load(t, spec), Config{BaseURL: srv.URL, Log: zap.New(core), Credentials: []upstream.Credential{
		upstream.APIKey{In: "query", Name: "api_key", Value: "gateway-key"},
		upstream.APIKey{In: "cookie", Name: "sid", Value: "gateway-sid"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ args, dropped string }{
		{`{"filter": {"api_key": "guess-1", "color": "red"}, "prefs": {"sid": "guess-2", "theme": "dark"}}`, "query api_key,cookie sid"},
		{`{"filter": {"api%5Fkey": "guess-1", "color": "red"}, "prefs": {"theme": "dark"}}`, ""}, // another name: sent, escaped
		{`{"filter": {"color": "red"}, "prefs": {"theme": "dark"}}`, ""},
	} {
		logs.TakeAll()
		if _, err := call(t, tools[0], tc.args, nil); err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		got := srv.last(t)
		q, _ := url.ParseQuery(got.RawQuery)
		if len(q["api_key"]) != 1 || q.Get("api_key") != "gateway-key" || q.Get("color") != "red" {
			t.Errorf("%s: query %q", tc.args, got.RawQuery)
		}
		if c := got.Header.Get("Cookie"); strings.Count(c, "sid=") != 1 || !strings.Contains(c, "sid=gateway-sid") || !strings.Contains(c, "theme=dark") {
			t.Errorf("%s: cookies %q", tc.args, c)
		}
		entries := logs.TakeAll()
		if tc.dropped == "" {
			if len(entries) != 0 {
				t.Errorf("%s: logged %v", tc.args, entries)
			}
			continue
		}
		if len(entries) != 1 {
			t.Fatalf("%s: %d log lines, want 1", tc.args, len(entries))
		}
		fields := entries[0].ContextMap()
		if fields["tool"] != "search" || !strings.Contains(entries[0].Message, "dropped") {
			t.Errorf("log line %q %v", entries[0].Message, fields)
		}
		var names []string
		for _, n := range fields["dropped"].([]any) {
			names = append(names, n.(string))
		}
		if strings.Join(names, ",") != tc.dropped {
			t.Errorf("dropped %v, want %s", names, tc.dropped)
		}
		for _, secret := range []string{"guess-1", "guess-2", "gateway-key", "gateway-sid"} {
			if strings.Contains(entries[0].Message+strings.Join(names, ","), secret) {
				t.Errorf("the log line carries a value: %v", fields)
			}
		}
	}
}
