package openapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
)

// bodiesTools loads testdata/bodies.yaml against srv.
func bodiesTools(t *testing.T, srv *recorder) (map[string]*pipeline.Tool, Report) {
	t.Helper()
	doc := load(t, "testdata/bodies.yaml")
	tools, report, err := Tools(doc, Config{BaseURL: srv.URL + "/api", Options: Options{Prefix: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*pipeline.Tool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	return byName, report
}

func callTool(t *testing.T, tools map[string]*pipeline.Tool, name string, args map[string]any) error {
	t.Helper()
	tl := tools[name]
	if tl == nil {
		t.Fatalf("no tool %s", name)
	}
	_, err := tl.Executor.Execute(context.Background(), &pipeline.Call{Tool: tl, Inputs: args})
	return err
}

// TestRequestBodyMediaTypes: bodies in the media types real documents
// write, which each stopped the whole source before (no media type the
// gateway could send): JSON with parameters, a +json suffix or an x- JSON
// type is sent as JSON in that media type, */* as application/json (bytes
// when its schema is binary), text as the caller's string with a string
// input schema, image/png and application/octet-stream as the bytes of the
// caller's base64. multipart/mixed is left out, saying why.
func TestRequestBodyMediaTypes(t *testing.T) {
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	tools, report := bodiesTools(t, srv)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	thing := map[string]any{"name": "a-b_c", "size": json.Number("3")}
	for _, tc := range []struct {
		tool        string
		body        any
		contentType string
		sent        string
	}{
		{"b_charset", thing, "application/json; charset=utf-8", `{"name":"a-b_c","size":3}`},
		{"b_versioned", thing, "application/json;version=2018-01-01", `{"name":"a-b_c","size":3}`},
		{"b_vendor", thing, "application/vnd.x+json", `{"name":"a-b_c","size":3}`},
		{"b_DoThing", thing, "application/x-amz-json-1.1", `{"name":"a-b_c","size":3}`},
		{"b_anything", thing, "application/json", `{"name":"a-b_c","size":3}`},
		{"b_upload", base64.StdEncoding.EncodeToString(png), "image/png", string(png)},
		{"b_note", "hello\nworld", "text/plain", "hello\nworld"},
		{"b_xml", "<thing/>", "application/xml", "<thing/>"},
		{"b_logo", base64.StdEncoding.EncodeToString(png), "image/png", string(png)},
		{"b_blob", base64.RawURLEncoding.EncodeToString([]byte{0, 1, 0xfe, 0xff}), "application/octet-stream", "\x00\x01\xfe\xff"},
	} {
		args := map[string]any{"body": tc.body}
		if tc.tool == "b_DoThing" {
			args["X-Amz-Target"] = "Svc.DoThing"
		}
		if err := callTool(t, tools, tc.tool, args); err != nil {
			t.Errorf("%s: %v", tc.tool, err)
			continue
		}
		got := srv.last(t)
		if ct := got.Header.Get("Content-Type"); ct != tc.contentType || got.Body != tc.sent {
			t.Errorf("%s: sent %q as %q, want %q as %q", tc.tool, got.Body, ct, tc.sent, tc.contentType)
		}
	}
	for _, tc := range []struct{ tool, want string }{
		{"b_note", `{"description":"The text/plain content.","type":"string"}`},
		{"b_logo", `{"contentEncoding":"base64","description":"The image/png content, base64-encoded.","type":"string"}`},
	} {
		var in struct{ Properties map[string]json.RawMessage }
		if err := json.Unmarshal(tools[tc.tool].InputSchema, &in); err != nil || string(in.Properties["body"]) != tc.want {
			t.Errorf("%s: body published as %s, want %s", tc.tool, in.Properties["body"], tc.want)
		}
	}
	if err := callTool(t, tools, "b_note", map[string]any{"body": map[string]any{}}); err == nil || !strings.Contains(err.Error(), "string") {
		t.Errorf("an object for a text body: %v", err)
	}
	if err := callTool(t, tools, "b_logo", map[string]any{"body": "not base64!"}); err == nil || !strings.Contains(err.Error(), "base64") {
		t.Errorf("a body that is not base64: %v", err)
	}
	if tools["b_mixed"] != nil || len(report.Skipped) != 1 || report.Skipped[0].Operation != "POST /mixed (mixed)" ||
		!strings.Contains(report.Skipped[0].Reason, "no media type the gateway can send (the document offers multipart/mixed)") {
		t.Errorf("multipart/mixed: %+v", report.Skipped)
	}
}

// TestMultipartEncoding: a multipart/form-data body follows OpenAPI's
// encoding object and its defaults (3.1.1, Encoding Object and "Encoding
// multipart Media Types"): an object is a part of type application/json
// (it was sent as text with no Content-Type), an array is one part per
// item under the same name, objects in it each application/json, a file
// (format binary) is the bytes of the caller's base64 with a filename, an
// explicit contentType is sent, a number is text. kin-openapi's request
// validator, which decodes parts by these rules, accepts the request.
func TestMultipartEncoding(t *testing.T) {
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	tools, _ := bodiesTools(t, srv)
	err := callTool(t, tools, "b_form", map[string]any{"body": map[string]any{
		"meta":   map[string]any{"name": "m", "size": json.Number("2")},
		"tags":   []any{"x", "y"},
		"points": []any{map[string]any{"x": json.Number("1")}, map[string]any{"x": json.Number("2")}},
		"count":  json.Number("5"),
		"file":   base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 bytes")),
		"raw":    "a,b",
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := srv.last(t)
	mt, params, err := mime.ParseMediaType(got.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		t.Fatalf("Content-Type %q", got.Header.Get("Content-Type"))
	}
	var parts []string
	mr := multipart.NewReader(strings.NewReader(got.Body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p)
		parts = append(parts, p.FormName()+"|"+p.FileName()+"|"+p.Header.Get("Content-Type")+"|"+string(b))
	}
	want := []string{
		"count|||5",
		"file|file|application/octet-stream|%PDF-1.4 bytes",
		`meta||application/json|{"name":"m","size":2}`,
		`points||application/json|{"x":1}`,
		`points||application/json|{"x":2}`,
		"raw||text/csv|a,b",
		"tags|||x",
		"tags|||y",
	}
	if strings.Join(parts, "\n") != strings.Join(want, "\n") {
		t.Errorf("parts:\n%s\nwant:\n%s", strings.Join(parts, "\n"), strings.Join(want, "\n"))
	}

	// A key with a line break is one part's name, escaped as
	// mime/multipart and browsers escape it, never a header of its own.
	if err := callTool(t, tools, "b_form", map[string]any{"body": map[string]any{"meta": map[string]any{}, "x\"\r\nContent-Type: text/html": "v"}}); err != nil {
		t.Fatal(err)
	}
	if body := srv.last(t).Body; !strings.Contains(body, `Content-Disposition: form-data; name="x\"%0D%0AContent-Type: text/html"`+"\r\n\r\nv\r\n") {
		t.Errorf("a part name with a line break:\n%s", body)
	}

	// The same request, checked by kin-openapi's validator against the
	// document.
	doc := load(t, "testdata/bodies.yaml")
	spec := newSpecServer(t, doc.T)
	req, _ := http.NewRequest(http.MethodPost, spec.URL+"/form", bytes.NewReader([]byte(got.Body)))
	req.Header.Set("Content-Type", got.Header.Get("Content-Type"))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if hits := spec.requests(); len(hits) != 1 || hits[0].Invalid != "" {
		t.Errorf("kin-openapi's validator: %+v", hits)
	}
}

// TestPathTemplateFragmentAndQuery: "#..." in a path template is a
// fragment, never sent (APIs.guru's AWS documents: it was sent as %23 in
// the path); "?..." is a query of the template's own, its variables filled
// by path parameters, or left to the query parameter of the same name.
func TestPathTemplateFragmentAndQuery(t *testing.T) {
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	tools, _ := bodiesTools(t, srv)
	for _, tc := range []struct {
		tool, path, query string
		args              map[string]any
	}{
		{"b_DoThing", "/api/", "", map[string]any{"X-Amz-Target": "Svc.DoThing"}},
		{"b_alerts", "/api/alerts", "lat=1.5&lon=-2", map[string]any{"lat": json.Number("1.5"), "lon": json.Number("-2")}},
		{"b_search", "/api/search", "v=2&query=a%20b", map[string]any{"query": "a b"}},
	} {
		if err := callTool(t, tools, tc.tool, tc.args); err != nil {
			t.Errorf("%s: %v", tc.tool, err)
			continue
		}
		if got := srv.last(t); got.RawPath != tc.path || got.RawQuery != tc.query {
			t.Errorf("%s: sent %s?%s, want %s?%s", tc.tool, got.RawPath, got.RawQuery, tc.path, tc.query)
		}
	}
}

// TestFindingsThatChangeNoCall: a stray "definitions" in a schema, a
// parameter declared twice and an example without a value each
// stopped the document's load; they change no call, so the document loads
// with them as findings and its operations are served. strict fails it
// (and validates responses and components too, as every load did).
func TestFindingsThatChangeNoCall(t *testing.T) {
	doc := load(t, "testdata/bodies.yaml")
	all := strings.Join(doc.Findings, "\n")
	for _, want := range []string{"POST /note: extra sibling fields: [definitions]", `GET /search?query={query}&v=2: more than one "query" parameter has name "query"`} {
		if !strings.Contains(all, want) {
			t.Errorf("findings %q, want one with %q", doc.Findings, want)
		}
	}
	if _, err := Load(context.Background(), "testdata/bodies.yaml", LoadOptions{Strict: true}); err == nil || !strings.Contains(err.Error(), `example "empty": no value or externalValue field`) {
		t.Errorf("strict load of a document with an example without a value: %v", err)
	}
}
