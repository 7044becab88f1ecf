package openapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

func load(t *testing.T, path string) *Document {
	t.Helper()
	doc, err := Load(context.Background(), path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func toolNames(t *testing.T, doc *Document, opt Options) []string {
	t.Helper()
	ops, _, err := Operations(doc, opt)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range ops {
		names = append(names, o.Tool)
	}
	return names
}

// TestLoadVersions: OpenAPI 3.0 YAML, 3.1 JSON and Swagger 2.0 (converted)
// all load and yield their operations.
func TestLoadVersions(t *testing.T) {
	for _, tc := range []struct {
		file, want string
		converted  bool
	}{
		{"testdata/petstore.yaml", "pets_get_notes_day pets_listPets pets_createPet pets_showPetById pets_updatePet pets_getPhoto pets_getTree", false},
		{"testdata/notes31.json", "pets_addNote pets_getNote", false},
		{"testdata/swagger2.yaml", "pets_getUser", true},
	} {
		doc := load(t, tc.file)
		if got := strings.Join(toolNames(t, doc, Options{Prefix: "pets"}), " "); got != tc.want {
			t.Errorf("%s: tools %s, want %s", tc.file, got, tc.want)
		}
		if doc.Converted != tc.converted {
			t.Errorf("%s: converted = %t", tc.file, doc.Converted)
		}
	}
}

// TestLoadFromURL: a document served over HTTP loads, relative server URLs
// resolve against it; a document over the size bound, a slow server and a
// non-200 answer fail with what went wrong.
func TestLoadFromURL(t *testing.T) {
	spec, _ := os.ReadFile("testdata/notes31.json")
	mux := http.NewServeMux()
	mux.HandleFunc("/spec.json", func(w http.ResponseWriter, r *http.Request) { w.Write(spec) })
	mux.HandleFunc("/slow.json", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	doc, err := Load(context.Background(), srv.URL+"/spec.json", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base, err := baseURL(doc, "")
	if err != nil || base.String() != srv.URL+"/api" {
		t.Errorf("base URL %v, %v; want %s/api", base, err, srv.URL)
	}
	for _, tc := range []struct {
		url  string
		opt  LoadOptions
		want string
	}{
		{srv.URL + "/spec.json", LoadOptions{MaxSize: 100}, "larger than 100 bytes"},
		{srv.URL + "/slow.json", LoadOptions{Timeout: 200 * time.Millisecond}, "deadline exceeded"},
		{srv.URL + "/missing.json", LoadOptions{}, "HTTP 404"},
	} {
		if _, err := Load(context.Background(), tc.url, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.url, err, tc.want)
		}
	}
}

// TestExternalRefsOff: a document that points a $ref at another file or a
// URL cannot make the gateway read it unless allowed.
func TestExternalRefsOff(t *testing.T) {
	hit := make(chan string, 1)
	var spec string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/spec.yaml" {
			w.Write([]byte(spec))
			return
		}
		select {
		case hit <- r.URL.Path:
		default:
		}
		w.Write([]byte(`{"type":"string"}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	spec = `openapi: 3.0.3
info: {title: x, version: "1"}
paths:
  /a:
    get:
      operationId: a
      parameters:
        - {name: q, in: query, schema: {$ref: "` + srv.URL + `/schema.json"}}
      responses: {"200": {description: ok}}
`
	path := dir + "/spec.yaml"
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(context.Background(), path, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "external") {
		t.Errorf("external $ref with refs off: %v", err)
	}
	select {
	case p := <-hit:
		t.Errorf("the server was asked for %s", p)
	default:
	}
	// Allowed, a $ref on the origin of the document is read (one
	// elsewhere only at a public address: TestExternalRefsPolicy).
	if _, err := Load(context.Background(), srv.URL+"/spec.yaml", LoadOptions{AllowExternalRefs: true}); err != nil {
		t.Errorf("external $ref allowed: %v", err)
	}
}

// TestLoadRefusesWhatIsNotADocument names the file and the reason.
func TestLoadRefusesWhatIsNotADocument(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"list.yaml":    "- a\n- b\n",
		"nothing.json": `{"info": {}}`,
		"broken.yaml":  "openapi: 3.0.3\npaths: [",
	} {
		p := dir + "/" + name
		os.WriteFile(p, []byte(text), 0o644)
		if _, err := Load(context.Background(), p, LoadOptions{}); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Load(context.Background(), dir+"/absent.yaml", LoadOptions{}); err == nil {
		t.Error("absent file loaded")
	}
}

// TestLoadPathsDifferingInVariableNames: two path templates that differ
// only in their variables' names (as in GitHub's document) load, each
// operation a tool; the operations of the second path are still
// validated, so a broken one there is left out, saying why (strict: the
// load fails). A problem outside the paths changes no call: it is a
// finding, and fails only a strict load.
func TestLoadPathsDifferingInVariableNames(t *testing.T) {
	dir := t.TempDir()
	spec := func(second string) string {
		return `openapi: 3.0.3
info: {title: x, version: "1"}
paths:
  /things/{id}:
    get:
      operationId: getThing
      parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
      responses: {"200": {description: ok}}
  /things/{zname}:
    delete:
      operationId: deleteThing
      parameters: [` + second + `]
      responses: {"204": {description: gone}}
`
	}
	good := dir + "/good.yaml"
	writeSpec(t, good, spec(`{name: zname, in: path, required: true, schema: {type: string}}`))
	doc := load(t, good)
	if got := strings.Join(toolNames(t, doc, Options{Prefix: "p"}), " "); got != "p_getThing p_deleteThing" {
		t.Errorf("tools %s", got)
	}
	noVersion := dir + "/noversion.yaml"
	writeSpec(t, noVersion, strings.Replace(spec(`{name: zname, in: path, required: true, schema: {type: string}}`), `version: "1"`, `version: ""`, 1))
	if doc := load(t, noVersion); len(doc.Findings) != 1 || !strings.Contains(doc.Findings[0], "version") {
		t.Errorf("info without a version: findings %q", doc.Findings)
	}
	if _, err := Load(context.Background(), noVersion, LoadOptions{Strict: true}); err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("info without a version, strict: %v", err)
	}
	for name, tc := range map[string]struct{ param, want string }{
		"undeclared.yaml": {`{name: other, in: path, required: true, schema: {type: string}}`, "must define exactly all path parameters"},
		"optional.yaml":   {`{name: zname, in: path, schema: {type: string}}`, `path parameter "zname" must be required`},
	} {
		p := dir + "/" + name
		writeSpec(t, p, spec(tc.param))
		doc := load(t, p)
		ops, skipped, err := Operations(doc, Options{})
		if err != nil || len(ops) != 1 || len(skipped) != 1 || skipped[0].Operation != "DELETE /things/{zname} (deleteThing)" || !strings.Contains(skipped[0].Reason, tc.want) {
			t.Errorf("%s: %v %d %+v, want the second path's operation left out", name, err, len(ops), skipped)
		}
		_, err = Load(context.Background(), p, LoadOptions{Strict: true})
		if err == nil || !strings.Contains(err.Error(), p+": invalid document: DELETE /things/{zname}: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s, strict: %v, want the second path's operation refused", name, err)
		}
	}
}

func writeSpec(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRelativeServers: a relative server URL resolves against the URL the
// document was fetched from ("//host" takes its scheme, "/rest" its
// origin), as the specification says; a document read from a file has
// nothing to resolve against, which fileServer tells at adapt time.
func TestRelativeServers(t *testing.T) {
	for server, want := range map[string]string{
		"//kubernetes.local/api": "https://kubernetes.local/api",
		"/rest":                  "https://specs.example.test/rest",
		"v2":                     "https://specs.example.test/apis/v2",
	} {
		doc := &Document{T: &openapi3.T{Servers: openapi3.Servers{{URL: server}}}, Location: "https://specs.example.test/apis/k8s.json"}
		if u, err := baseURL(doc, ""); err != nil || u.String() != want {
			t.Errorf("%s: %v %v, want %s", server, u, err, want)
		}
		doc.Location = "/srv/specs/k8s.json"
		if _, err := baseURL(doc, ""); err == nil || !strings.Contains(err.Error(), "set base_url") {
			t.Errorf("%s in a file: %v", server, err)
		}
	}
	for file, want := range map[string]string{
		"testdata/relative-server.yaml": `the server URL "/rest" is relative`,
		"testdata/notes31.json":         `the server URL "/api" is relative`,
		"testdata/petstore.yaml":        "",
		"testdata/swagger2.yaml":        "",
		"testdata/absent.yaml":          "",
	} {
		if got, relative := fileServer(file, 0); got != want || relative != (want != "") {
			t.Errorf("fileServer(%s) = %q, %t; want %q", file, got, relative, want)
		}
	}
}
