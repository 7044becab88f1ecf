package openapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// recorded is what the upstream received.
type recorded struct {
	Method, Path, RawPath, RawQuery string
	Header                          http.Header
	Body                            string
}

// recorder is a real HTTP server that records each request and answers
// with the handler's response.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

func newRecorder(t *testing.T, answer http.HandlerFunc) *recorder {
	t.Helper()
	u := &recorder{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.reqs = append(u.reqs, recorded{r.Method, r.URL.Path, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), string(b)})
		u.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *recorder) last(t *testing.T) recorded {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.reqs) == 0 {
		t.Fatal("the upstream received nothing")
	}
	return u.reqs[len(u.reqs)-1]
}

func (u *recorder) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.reqs)
}

func jsonAnswer(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
}

// toolsFor loads the pet store against srv with cfg and returns its tools by name.
func toolsFor(t *testing.T, srv *recorder, cfg Config) map[string]*pipeline.Tool {
	t.Helper()
	doc := load(t, "testdata/petstore.yaml")
	cfg.BaseURL = srv.URL + "/v1"
	cfg.Deprecated = true
	tools, _, err := Tools(doc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*pipeline.Tool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	return byName
}

func call(t *testing.T, tool *pipeline.Tool, args string, header http.Header) (*pipeline.Result, error) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	var in map[string]any
	if err := dec.Decode(&in); err != nil {
		t.Fatal(err)
	}
	return tool.Executor.Execute(context.Background(), &pipeline.Call{Tool: tool, Inputs: in, Request: &pipeline.RequestInfo{Header: header}})
}

// TestRequestParts: every part of a request reaches the upstream as the
// document says, and the JSON answer comes back as structuredContent.
func TestRequestParts(t *testing.T) {
	srv := newRecorder(t, jsonAnswer(`{"pets": [{"id": 9007199254740993, "name": "Rex"}]}`))
	tools := toolsFor(t, srv, Config{})
	res, err := call(t, tools["listPets"], `{"limit": 5, "X-Request-Tag": "t1", "session": "abc"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := srv.last(t)
	if got.Method != "GET" || got.Path != "/v1/pets" || got.RawQuery != "limit=5" || got.Header.Get("X-Request-Tag") != "t1" || got.Header.Get("Cookie") != "session=abc" {
		t.Errorf("request %+v", got)
	}
	var out struct {
		Content           []map[string]any
		StructuredContent map[string]any
	}
	if err := json.Unmarshal(res.Native, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Content[0]["text"].(string), "9007199254740993") || out.StructuredContent["pets"] == nil {
		t.Errorf("result %s", res.Native)
	}

	// A JSON body, and a form body.
	if _, err := call(t, tools["createPet"], `{"body": {"name": "Rex", "tag": null}}`, nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.last(t); got.Method != "POST" || got.Header.Get("Content-Type") != "application/json" || got.Body != `{"name":"Rex","tag":null}` {
		t.Errorf("JSON body request %+v", got)
	}
	if _, err := call(t, tools["updatePet"], `{"petId": "7", "body": {"name": "Rex & co", "tag": "a=b"}}`, nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.last(t); got.Method != "PUT" || got.Path != "/v1/pets/7" || got.Body != "name=Rex+%26+co&tag=a%3Db" {
		t.Errorf("form body request %+v", got)
	}
}

// TestPathValuesStayInTheirSegment: a path value cannot reach another
// path of the upstream, whatever it contains.
func TestPathValuesStayInTheirSegment(t *testing.T) {
	srv := newRecorder(t, jsonAnswer(`{}`))
	tools := toolsFor(t, srv, Config{})
	for _, v := range []string{"../admin", "..", "a/b", "%2F", "x?admin=1", "y#frag", "../../v1/pets"} {
		arg, _ := json.Marshal(map[string]any{"petId": v})
		if _, err := call(t, tools["showPetById"], string(arg), nil); err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		got := srv.last(t)
		rest, ok := strings.CutPrefix(got.Path, "/v1/pets/")
		if !ok || rest != v || got.RawQuery != "" {
			t.Errorf("petId %q arrived as path %q (raw %q) query %q", v, got.Path, got.RawPath, got.RawQuery)
		}
	}
}

// TestArgumentsAreChecked before anything is sent: unknown inputs (the
// way to reach a header the tool does not offer), missing required ones
// and values outside their schema.
func TestArgumentsAreChecked(t *testing.T) {
	srv := newRecorder(t, jsonAnswer(`{}`))
	tools := toolsFor(t, srv, Config{Credentials: []upstream.Credential{upstream.Bearer{Token: "s3cret"}}})
	for _, tc := range []struct{ tool, args, want string }{
		{"listPets", `{"Authorization": "Bearer mine"}`, `unknown input "Authorization"`},
		{"listPets", `{"limit": 500}`, `input "limit"`},
		{"listPets", `{"limit": "5"}`, `input "limit"`},
		{"createPet", `{}`, `input "body" is required`},
		{"createPet", `{"body": {"tag": "x"}}`, `input "body"`},
		{"showPetById", `{}`, `input "petId" is required`},
	} {
		_, err := call(t, tools[tc.tool], tc.args, nil)
		var pe *pipeline.Error
		if !asError(err, &pe) || pe.Stage != pipeline.StageValidation || !strings.Contains(pe.Message, tc.want) {
			t.Errorf("%s %s: %v, want a validation error with %q", tc.tool, tc.args, err, tc.want)
		}
	}
	if n := srv.count(); n != 0 {
		t.Errorf("%d requests reached the upstream", n)
	}
}

func asError(err error, target **pipeline.Error) bool {
	pe, ok := err.(*pipeline.Error)
	if ok {
		*target = pe
	}
	return ok
}

// TestCredentials: each kind is sent; the parameter the document declares
// for the key is not offered to callers; passthrough forwards the caller's
// own token and refuses a call without one.
func TestCredentials(t *testing.T) {
	srv := newRecorder(t, jsonAnswer(`{}`))
	for _, tc := range []struct {
		cred  upstream.Credential
		check func(r recorded) bool
	}{
		{upstream.Bearer{Token: "tok"}, func(r recorded) bool { return r.Header.Get("Authorization") == "Bearer tok" }},
		{upstream.Basic{User: "u", Password: "p:w"}, func(r recorded) bool { return r.Header.Get("Authorization") == "Basic dTpwOnc=" }},
		{upstream.APIKey{In: "query", Name: "api_key", Value: "k&1"}, func(r recorded) bool {
			q, _ := url.ParseQuery(r.RawQuery)
			return q.Get("api_key") == "k&1" && q.Get("limit") == "2"
		}},
		{upstream.APIKey{In: "header", Name: "X-Api-Key", Value: "k2"}, func(r recorded) bool { return r.Header.Get("X-Api-Key") == "k2" }},
		{upstream.APIKey{In: "cookie", Name: "session", Value: "k3"}, func(r recorded) bool { return r.Header.Get("Cookie") == "session=k3" }},
		{upstream.Header{Name: "X-Request-Tag", Value: "fixed"}, func(r recorded) bool { return r.Header.Get("X-Request-Tag") == "fixed" }},
	} {
		tools := toolsFor(t, srv, Config{Credentials: []upstream.Credential{tc.cred}})
		if _, err := call(t, tools["listPets"], `{"limit": 2}`, nil); err != nil {
			t.Fatalf("%T: %v", tc.cred, err)
		}
		if r := srv.last(t); !tc.check(r) {
			t.Errorf("%T: request %+v", tc.cred, r)
		}
		// What the credential sets is not an input: a caller cannot set it.
		for _, name := range slicesOf(tc.cred.Reserves()) {
			if strings.Contains(string(tools["listPets"].InputSchema), `"`+name+`"`) {
				t.Errorf("%T: %q is offered to callers: %s", tc.cred, name, tools["listPets"].InputSchema)
			}
		}
	}

	tools := toolsFor(t, srv, Config{Credentials: []upstream.Credential{upstream.Passthrough{}}})
	if _, err := call(t, tools["listPets"], `{}`, http.Header{"Authorization": {"Bearer caller-token"}}); err != nil {
		t.Fatal(err)
	}
	if r := srv.last(t); r.Header.Get("Authorization") != "Bearer caller-token" {
		t.Errorf("passthrough sent %q", r.Header.Get("Authorization"))
	}
	before := srv.count()
	if _, err := call(t, tools["listPets"], `{}`, http.Header{}); err == nil || !strings.Contains(pipeline.SafeText(err, ""), "no bearer token") {
		t.Errorf("passthrough without a token: %v", err)
	}
	if srv.count() != before {
		t.Error("a call without a token reached the upstream")
	}
}

func slicesOf(r upstream.Reserved) []string {
	return append(append(append([]string{}, r.Headers...), r.Query...), r.Cookies...)
}

// TestResponses: non-2xx is an error with the status and the start of the
// body; 204 is null; text, images and other binaries become MCP content;
// a response over max_response_size fails.
func TestResponses(t *testing.T) {
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/pets/404":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			io.WriteString(w, `{"message": "no pet 404"}`+strings.Repeat(" ", 1000)+"TAIL")
		case "/v1/pets/gone":
			w.WriteHeader(204)
		case "/v1/pets/7/photo":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n"))
		case "/v1/notes/2026-01-02":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, "buy milk")
		case "/v1/pets/big":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `"`+strings.Repeat("x", 2000)+`"`)
		}
	})
	tools := toolsFor(t, srv, Config{MaxResponseSize: 1024})
	_, err := call(t, tools["showPetById"], `{"petId": "404"}`, nil)
	if msg := pipeline.SafeText(err, ""); !strings.HasPrefix(msg, `HTTP 404 Not Found: {"message": "no pet 404"}`) || strings.Contains(msg, "TAIL") {
		t.Errorf("404: %q", msg)
	}
	if res, err := call(t, tools["deletePet"], `{"petId": "gone"}`, nil); err != nil || res.Value != nil || res.Native != nil {
		t.Errorf("204: %+v %v", res, err)
	}
	if res, err := call(t, tools["getPhoto"], `{"petId": "7"}`, nil); err != nil || string(res.Native) != `{"content":[{"data":"iVBORw0KGgo=","mimeType":"image/png","type":"image"}]}` {
		t.Errorf("image: %s %v", res.Native, err)
	}
	if res, err := call(t, tools["get_notes_day"], `{"day": "2026-01-02"}`, nil); err != nil || string(res.Native) != `{"content":[{"text":"buy milk","type":"text"}]}` {
		t.Errorf("text: %s %v", res.Native, err)
	}
	if _, err := call(t, tools["showPetById"], `{"petId": "big"}`, nil); !strings.Contains(pipeline.SafeText(err, ""), "larger than 1024 bytes") {
		t.Errorf("big: %v", err)
	}
}

// TestRedirectsStayOnTheOrigin: a redirect to another host is not
// followed, so the credential never reaches it.
func TestRedirectsStayOnTheOrigin(t *testing.T) {
	other := newRecorder(t, jsonAnswer(`{"stolen": true}`))
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/pets/away":
			http.Redirect(w, r, other.URL+"/collect", http.StatusFound)
		case "/v1/pets/here":
			http.Redirect(w, r, "/v1/pets/7", http.StatusFound)
		default:
			jsonAnswer(`{"id": 7, "name": "Rex"}`)(w, r)
		}
	})
	tools := toolsFor(t, srv, Config{Credentials: []upstream.Credential{upstream.Bearer{Token: "s3cret"}}})
	if _, err := call(t, tools["showPetById"], `{"petId": "away"}`, nil); !strings.Contains(pipeline.SafeText(err, ""), "HTTP 302") {
		t.Errorf("redirect away: %v", err)
	}
	if other.count() != 0 {
		t.Error("the other origin was called")
	}
	if res, err := call(t, tools["showPetById"], `{"petId": "here"}`, nil); err != nil || !strings.Contains(string(res.Native), "Rex") {
		t.Errorf("same-origin redirect: %v", err)
	}
}

func TestCacheControl(t *testing.T) {
	for _, tc := range []struct {
		header  []string
		noStore bool
		maxAge  time.Duration
	}{
		{nil, false, 0},
		{[]string{"no-store"}, true, 0},
		{[]string{"private, max-age=60"}, true, 60 * time.Second},
		{[]string{"no-cache"}, true, 0},
		{[]string{"public, max-age=30"}, false, 30 * time.Second},
		{[]string{"max-age=30, s-maxage=5"}, false, 5 * time.Second},
		{[]string{"s-maxage=5", "max-age=30"}, false, 5 * time.Second},
		{[]string{`max-age="12"`}, false, 12 * time.Second},
		{[]string{"max-age=0"}, true, 0},
		{[]string{"max-age=junk"}, false, 0},
	} {
		h := http.Header{}
		for _, v := range tc.header {
			h.Add("Cache-Control", v)
		}
		if noStore, maxAge := cacheControl(h); noStore != tc.noStore || maxAge != tc.maxAge {
			t.Errorf("%q: no-store %t max-age %s, want %t %s", tc.header, noStore, maxAge, tc.noStore, tc.maxAge)
		}
	}
}
