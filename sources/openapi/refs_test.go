package openapi

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// docWithRef is a document whose one parameter's schema is at ref.
func docWithRef(ref string) string {
	return `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
	 "paths": {"/a": {"get": {"operationId": "a",
	   "parameters": [{"name": "q", "in": "query", "schema": {"$ref": "` + ref + `"}}],
	   "responses": {"200": {"description": "ok"}}}}}}`
}

// hits is a real HTTP server that serves fixed bodies by path and records
// every path asked.
type hits struct {
	URL   string
	mu    sync.Mutex
	asked []string
}

func newHits(t *testing.T, bodies map[string]string, redirects map[string]string) *hits {
	t.Helper()
	h := &hits{}
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.asked = append(h.asked, r.URL.Path)
		h.mu.Unlock()
		if to, ok := redirects[r.URL.Path]; ok {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		if b, ok := bodies[r.URL.Path]; ok {
			w.Write([]byte(b))
			return
		}
		http.NotFound(w, r)
	})
	h.URL = srv.URL
	return h
}

func (h *hits) paths() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.asked, " ")
}

// secretFile is a local file a document should never read.
func secretFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "passwd")
	writeSpec(t, p, "root:x:0:0:TOPSECRET:/root:/bin/bash\n")
	return p
}

// TestRemoteDocumentReadsNoLocalFile: with allow_external_refs, a document
// read from a URL cannot make the gateway read a local file, by file: URL
// or absolute path; the load fails saying so, and no part of the file is
// in the error. Before, the file was read and its start quoted in the
// error ("cannot construct !!str `root:x:...`").
func TestRemoteDocumentReadsNoLocalFile(t *testing.T) {
	secret := secretFile(t)
	for _, ref := range []string{"file://" + secret + "#/", secret + "#/", "file://" + secret + "#/components"} {
		srv := newHits(t, map[string]string{"/spec.json": docWithRef(ref)}, nil)
		_, err := Load(context.Background(), srv.URL+"/spec.json", LoadOptions{AllowExternalRefs: true})
		if err == nil || !strings.Contains(err.Error(), "a local file is read only through a relative $ref of a local document") ||
			strings.Contains(err.Error(), "root:") || strings.Contains(err.Error(), "TOPSECRET") {
			t.Errorf("%s: %v", ref, err)
		}
	}
}

// TestLocalDocumentRefs: a local document's relative $refs read the files
// they name, next to it or above it; an absolute one is refused; a file
// that is not a document fails the load without its contents quoted.
func TestLocalDocumentRefs(t *testing.T) {
	dir := t.TempDir()
	writeSpec(t, filepath.Join(dir, "common.yaml"), "components:\n  schemas:\n    Q: {type: string}\n")
	if err := os.Mkdir(filepath.Join(dir, "v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := secretFile(t)
	writeSpec(t, filepath.Join(dir, "v1", "passwd"), "root:x:0:0:TOPSECRET:/root:/bin/bash\n")
	for ref, want := range map[string]string{
		"../common.yaml#/components/schemas/Q": "",
		secret + "#/":                          "a local file is read only through a relative $ref",
		"file://" + secret + "#/":              "a local file is read only through a relative $ref",
		"passwd#/components":                   "`…`",
	} {
		spec := filepath.Join(dir, "v1", "spec.json")
		writeSpec(t, spec, docWithRef(ref))
		_, err := Load(context.Background(), spec, LoadOptions{AllowExternalRefs: true})
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", ref, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want %q", ref, err, want)
		case err != nil && (strings.Contains(err.Error(), "root:") || strings.Contains(err.Error(), "TOPSECRET")):
			t.Errorf("%s: the error quotes the file: %v", ref, err)
		}
	}
}

// TestExternalRefsPolicy: a $ref to a URL on the origin of the document
// the operator named is read; one to another origin only at a public
// address (every address of a test is loopback, so it is refused here,
// before the server is asked), whether the document is remote or local.
func TestExternalRefsPolicy(t *testing.T) {
	other := newHits(t, map[string]string{"/schema.json": `{"type": "string"}`}, nil)
	home := newHits(t, map[string]string{
		"/same.json":   docWithRef("schema.json"),
		"/other.json":  docWithRef(other.URL + "/schema.json"),
		"/via.json":    docWithRef("moved.json"),
		"/schema.json": `{"type": "string"}`,
	}, map[string]string{"/moved.json": other.URL + "/schema.json"})
	if _, err := Load(context.Background(), home.URL+"/same.json", LoadOptions{AllowExternalRefs: true}); err != nil {
		t.Errorf("a $ref on the document's origin: %v", err)
	}
	local := filepath.Join(t.TempDir(), "spec.json")
	writeSpec(t, local, docWithRef(other.URL+"/schema.json"))
	for _, loc := range []string{home.URL + "/other.json", local} {
		_, err := Load(context.Background(), loc, LoadOptions{AllowExternalRefs: true})
		if err == nil || !strings.Contains(err.Error(), "internal address") {
			t.Errorf("%s: %v, want the other origin's internal address refused", loc, err)
		}
	}
	if _, err := Load(context.Background(), home.URL+"/via.json", LoadOptions{AllowExternalRefs: true}); err == nil || !strings.Contains(err.Error(), "redirect to another origin is not followed") {
		t.Errorf("a $ref redirected to another origin: %v", err)
	}
	if p := other.paths(); p != "" {
		t.Errorf("the other origin was asked for %s", p)
	}
}

// TestSpecFetchStaysOnOrigin: the document's URL is followed through a
// redirect on its origin, not to another one (which never hears of it).
// Before, the document was read from wherever the redirect pointed.
func TestSpecFetchStaysOnOrigin(t *testing.T) {
	other := newHits(t, map[string]string{"/spec.json": docWithRef("#/components/schemas/Q")}, nil)
	home := newHits(t, map[string]string{"/spec.json": `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {}}`},
		map[string]string{"/away.json": other.URL + "/spec.json", "/moved.json": "/spec.json"})
	if _, err := Load(context.Background(), home.URL+"/moved.json", LoadOptions{}); err != nil {
		t.Errorf("a redirect on the origin: %v", err)
	}
	_, err := Load(context.Background(), home.URL+"/away.json", LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "HTTP 302 Found: a redirect to another origin is not followed") {
		t.Errorf("a redirect to another origin: %v", err)
	}
	if p := other.paths(); p != "" {
		t.Errorf("the other origin was asked for %s", p)
	}
}
