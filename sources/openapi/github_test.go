package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy/pathpattern"

	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
)

// GitHub's REST API description, as the npm package @octokit/openapi ships
// it (tests/node/package.json pins the version): OpenAPI 3.0, 1,200
// operations, 13 MB. EDGEMCP_NODE_DIR names the Node packages' directory
// (scripts/test.sh sets it); else tests/node of this checkout.
func githubSpec(t testing.TB) string {
	t.Helper()
	dir := testservices.NodeDir(t)
	p := filepath.Join(dir, "node_modules", "@octokit", "openapi", "generated", "api.github.com.json")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("GitHub's OpenAPI document is missing (%v): run `npm ci` in %s (scripts/test.sh does; tests/node/package.json lists @octokit/openapi)", err, dir)
	}
	return p
}

// specServer is the API a document describes, as a test needs it: each
// request is routed to its operation and validated against the document
// (parameters as serialized, the body against its schema) by kin-openapi's
// openapi3filter, and answered with the operation's success status and its
// JSON example (or {}). Every request is recorded.
type specServer struct {
	*httptest.Server
	doc  *openapi3.T
	root *pathpattern.Node

	mu   sync.Mutex
	hits []specHit
}

type specHit struct {
	Method, Path string
	OperationID  string // "" when no operation matched
	PathParams   map[string]string
	Query        url.Values
	Invalid      string // openapi3filter's complaint, "" when the request is valid
}

func newSpecServer(t *testing.T, doc *openapi3.T) *specServer {
	t.Helper()
	s := &specServer{doc: doc, root: &pathpattern.Node{}}
	// Routes as kin-openapi's legacy router makes them (legacy.NewRouter
	// would validate the document again, as kin-openapi does strictly, and
	// refuse GitHub's templates that differ only in variable names; the
	// gateway's loader allows those, see sources/openapi/load.go).
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for method, op := range item.Operations() {
			route := &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: op}
			if err := s.root.Add(method+" "+path, route, nil); err != nil {
				t.Fatalf("route %s %s: %v", method, path, err)
			}
		}
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *specServer) serve(w http.ResponseWriter, r *http.Request) {
	hit := specHit{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.Query()}
	defer func() {
		s.mu.Lock()
		s.hits = append(s.hits, hit)
		s.mu.Unlock()
	}()
	// Match on the escaped path, so an escaped "/" stays inside its
	// parameter; the values are handed on unescaped.
	node, values := s.root.Match(r.Method + " " + r.URL.EscapedPath())
	route, _ := nodeRoute(node)
	if route == nil {
		hit.Invalid = "no operation for " + r.Method + " " + r.URL.EscapedPath()
		http.Error(w, hit.Invalid, http.StatusNotFound)
		return
	}
	hit.OperationID = route.Operation.OperationID
	hit.PathParams = map[string]string{}
	for i, v := range values {
		if u, err := url.PathUnescape(v); err == nil {
			v = u
		}
		hit.PathParams[node.VariableNames[i]] = v
	}
	err := openapi3filter.ValidateRequest(r.Context(), &openapi3filter.RequestValidationInput{
		Request:    r,
		PathParams: hit.PathParams,
		Route:      route,
		Options:    &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	})
	if err != nil {
		hit.Invalid = err.Error()
		http.Error(w, hit.Invalid, http.StatusBadRequest)
		return
	}
	status, body := successResponse(route.Operation)
	if body != nil {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	w.WriteHeader(status)
	w.Write(body)
}

func nodeRoute(n *pathpattern.Node) (*routers.Route, bool) {
	if n == nil {
		return nil, false
	}
	r, ok := n.Value.(*routers.Route)
	return r, ok
}

func (s *specServer) requests() []specHit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.hits)
}

// successResponse is the operation's lowest 2xx status and, when that
// response is JSON, its example (the first by name) or {}.
func successResponse(op *openapi3.Operation) (int, []byte) {
	status, ok := successStatus(op)
	if !ok {
		return http.StatusOK, []byte(`{}`)
	}
	resp := op.Responses.Status(status)
	if resp == nil || resp.Value == nil || status == http.StatusNoContent {
		return status, nil
	}
	mt := resp.Value.Content.Get("application/json")
	if mt == nil {
		return status, nil
	}
	example := mt.Example
	if example == nil && len(mt.Examples) > 0 {
		names := make([]string, 0, len(mt.Examples))
		for n := range mt.Examples {
			names = append(names, n)
		}
		sort.Strings(names)
		if e := mt.Examples[names[0]]; e != nil && e.Value != nil {
			example = e.Value.Value
		}
	}
	if example == nil {
		return status, []byte(`{}`)
	}
	b, err := json.Marshal(example)
	if err != nil {
		return status, []byte(`{}`)
	}
	return status, b
}

func successStatus(op *openapi3.Operation) (int, bool) {
	best := 0
	for code := range op.Responses.Map() {
		n, err := strconv.Atoi(code)
		if err == nil && n >= 200 && n < 300 && (best == 0 || n < best) {
			best = n
		}
	}
	return best, best != 0
}

// sampleValue makes a value valid for s, or reports it cannot (a string
// pattern without an example that matches it). variant makes the values
// of two items differ. name seeds strings, so that a value shows where it
// came from.
func sampleValue(s *openapi3.Schema, name string, variant, depth int) (any, bool) {
	if s == nil {
		return "v-" + name, true
	}
	if depth > 8 {
		return nil, false
	}
	if len(s.Enum) > 0 {
		return s.Enum[variant%len(s.Enum)], true
	}
	for _, alts := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
		for _, alt := range alts {
			if alt.Value != nil && !alt.Value.Type.Is("null") {
				if v, ok := sampleValue(alt.Value, name, variant, depth+1); ok {
					return v, true
				}
			}
		}
		if len(alts) > 0 {
			return nil, false
		}
	}
	if len(s.AllOf) > 0 {
		merged := map[string]any{}
		for _, part := range s.AllOf {
			v, ok := sampleValue(part.Value, name, variant, depth+1)
			if !ok {
				return nil, false
			}
			m, isMap := v.(map[string]any)
			if !isMap {
				return v, true
			}
			for k, e := range m {
				merged[k] = e
			}
		}
		return merged, true
	}
	switch {
	case s.Type.Is("string"):
		return sampleString(s, name, variant)
	case s.Type.Is("integer"), s.Type.Is("number"):
		n := float64(1 + variant)
		if s.Min != nil && n < *s.Min {
			n = math.Ceil(*s.Min)
		}
		if s.Max != nil && n > *s.Max {
			n = math.Floor(*s.Max)
		}
		return n, true
	case s.Type.Is("boolean"):
		return true, true
	case s.Type.Is("array"):
		if s.Items == nil {
			return []any{"v-" + name}, true
		}
		v, ok := sampleValue(s.Items.Value, name, variant, depth+1)
		return []any{v}, ok
	case s.Type.Is("object") || len(s.Properties) > 0:
		out := map[string]any{}
		for _, p := range s.Required {
			ref := s.Properties[p]
			if ref == nil {
				out[p] = "v-" + p
				continue
			}
			v, ok := sampleValue(ref.Value, p, variant, depth+1)
			if !ok {
				return nil, false
			}
			out[p] = v
		}
		return out, true
	}
	return "v-" + name, true
}

func sampleString(s *openapi3.Schema, name string, variant int) (any, bool) {
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if ex, ok := s.Example.(string); ok && err == nil && re.MatchString(ex) {
			return ex, true
		}
		return nil, false
	}
	switch s.Format {
	case "date-time":
		return "2024-05-06T07:08:09Z", true
	case "date":
		return "2024-05-06", true
	case "uri", "url":
		return "https://example.com/" + name, true
	case "email":
		return name + "@example.com", true
	case "uuid":
		return fmt.Sprintf("123e4567-e89b-12d3-a456-42661417400%d", variant%10), true
	}
	v := "v-" + name
	if variant > 0 {
		v += strconv.Itoa(variant)
	}
	for uint64(len(v)) < s.MinLength {
		v += "x"
	}
	if s.MaxLength != nil && uint64(len(v)) > *s.MaxLength {
		v = v[:*s.MaxLength]
	}
	return v, true
}

// plannedCall is one sampled operation and the arguments sent to its tool.
type plannedCall struct {
	kind string
	op   *Operation
	args map[string]any
	// pathValues are the path parameters' values as the server must see
	// them; queryArray is the array query parameter the call fills.
	pathValues map[string]string
	queryArray string
}

// planCall builds the arguments of a call to o: every required input, and
// the optional inputs the kind is about. It reports false when it cannot
// make valid values (the gateway would refuse them before any request).
func planCall(kind string, o *Operation, fill func(p string) bool) (*plannedCall, bool) {
	c := &plannedCall{kind: kind, op: o, args: map[string]any{}, pathValues: map[string]string{}}
	for _, p := range o.Params {
		wantArray := kind == "query array" && p.In == "query" && isArray(p.Schema) && c.queryArray == ""
		if !p.Required && !wantArray && !fill(p.Property) {
			continue
		}
		if p.Schema == nil || p.Schema.Value == nil {
			return nil, false
		}
		v, ok := sampleValue(p.Schema.Value, p.Name, 0, 0)
		if !ok {
			return nil, false
		}
		if wantArray {
			second, ok := sampleValue(p.Schema.Value.Items.Value, p.Name, 1, 0)
			if !ok {
				return nil, false
			}
			v = append(v.([]any), second)
			c.queryArray = p.Name
		}
		if err := p.Schema.Value.VisitJSON(v); err != nil {
			return nil, false
		}
		c.args[p.Property] = v
		if p.In == "path" {
			c.pathValues[p.Name] = fmt.Sprint(v)
		}
	}
	if kind == "query array" && c.queryArray == "" {
		return nil, false
	}
	if o.Body != nil && (o.Body.Required || strings.HasSuffix(kind, "body")) {
		if o.Body.MediaType != "application/json" || o.Body.Schema == nil || o.Body.Schema.Value == nil {
			return nil, false
		}
		s := o.Body.Schema.Value
		v, ok := sampleValue(s, "body", 0, 0)
		if !ok {
			return nil, false
		}
		// A body with no required property gets its first one, so that
		// something is serialized.
		if m, isMap := v.(map[string]any); isMap && len(m) == 0 && len(s.Properties) > 0 {
			names := make([]string, 0, len(s.Properties))
			for n := range s.Properties {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				if pv, ok := sampleValue(s.Properties[n].Value, n, 0, 1); ok && s.Properties[n].Value != nil && !s.Properties[n].Value.ReadOnly {
					m[n] = pv
					break
				}
			}
		}
		if err := s.VisitJSON(v, openapi3.DisableReadOnlyValidation()); err != nil {
			return nil, false
		}
		c.args["body"] = v
	}
	return c, true
}

// optionalEnums are the properties of o's optional query parameters that
// take one of several values.
func optionalEnums(o *Operation) map[string]bool {
	out := map[string]bool{}
	for _, p := range o.Params {
		if p.In == "query" && !p.Required && p.Schema != nil && p.Schema.Value != nil && len(p.Schema.Value.Enum) > 1 {
			out[p.Property] = true
		}
	}
	return out
}

func isArray(ref *openapi3.SchemaRef) bool {
	return ref != nil && ref.Value != nil && ref.Value.Type.Is("array") && ref.Value.Items != nil && ref.Value.Items.Value != nil
}

// sampleCalls picks calls across methods and parameter styles, spread
// evenly over each kind's operations in name order, so that the same
// document always gives the same sample.
func sampleCalls(ops []*Operation) []*plannedCall {
	type kind struct {
		name  string
		n     int
		match func(o *Operation) bool
		fill  func(o *Operation) func(string) bool
	}
	none := func(*Operation) func(string) bool { return func(string) bool { return false } }
	countIn := func(o *Operation, in string) int {
		n := 0
		for _, p := range o.Params {
			if p.In == in {
				n++
			}
		}
		return n
	}
	kinds := []kind{
		{"path params", 4, func(o *Operation) bool { return o.Method == "GET" && countIn(o, "path") >= 2 }, none},
		{"query array", 3, func(o *Operation) bool { return o.Method == "GET" }, none},
		{"query enum", 1, func(o *Operation) bool {
			return o.Method == "GET" && len(optionalEnums(o)) > 0
		}, func(o *Operation) func(string) bool {
			enums := optionalEnums(o)
			return func(prop string) bool { return enums[prop] }
		}},
		{"no params", 1, func(o *Operation) bool { return o.Method == "GET" && len(o.Params) == 0 && o.Body == nil }, none},
		{"POST body", 3, func(o *Operation) bool { return o.Method == "POST" && o.Body != nil }, none},
		{"PUT body", 2, func(o *Operation) bool { return o.Method == "PUT" && o.Body != nil }, none},
		{"PATCH body", 3, func(o *Operation) bool { return o.Method == "PATCH" && o.Body != nil }, none},
		{"DELETE", 3, func(o *Operation) bool { return o.Method == "DELETE" }, none},
	}
	sorted := slices.Clone(ops)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Tool < sorted[j].Tool })
	taken := map[*Operation]bool{}
	var out []*plannedCall
	for _, k := range kinds {
		var cands []*plannedCall
		for _, o := range sorted {
			if taken[o] || !k.match(o) {
				continue
			}
			if _, ok := successStatus(o.Op); !ok {
				continue
			}
			if c, ok := planCall(k.name, o, k.fill(o)); ok {
				cands = append(cands, c)
			}
		}
		for i := 0; i < k.n && i < len(cands); i++ {
			c := cands[i*len(cands)/k.n]
			taken[c.op] = true
			out = append(out, c)
		}
	}
	return out
}

var toolNameRule = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// TestGitHubSpec: GitHub's whole REST API description (over a thousand
// operations) becomes tools, one per operation, each named by the strictest
// client rule; a sample of calls across methods and parameter styles,
// through the pipeline (input coercion and validation, then the executor),
// reaches the right operation of a server that validates each request
// against the same document. The document is parsed once: the server and
// the tools share it. (The Caddy path of a large registry — tools/list
// pages, calls — is caddymodule's TestOpenAPILargeRegistry, on a generated
// document that costs less to parse under -race.)
func TestGitHubSpec(t *testing.T) {
	start := time.Now()
	doc, err := Load(context.Background(), githubSpec(t), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded the document in %v", time.Since(start))
	api := newSpecServer(t, doc.T)
	ops, _, err := Operations(doc, Options{Prefix: "gh"})
	if err != nil {
		t.Fatal(err)
	}
	tools, _, err := Tools(doc, Config{Options: Options{Prefix: "gh"}, BaseURL: api.URL, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	engine, err := pipeline.NewEngine(tools)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d operations, %d tools in %v", len(ops), len(tools), time.Since(start))

	if len(tools) < 500 || len(tools) != len(ops) {
		t.Fatalf("%d tools, want the document's %d operations (at least 500)", len(tools), len(ops))
	}
	seen := map[string]bool{}
	for _, tl := range tools {
		if !toolNameRule.MatchString(tl.Name) {
			t.Errorf("tool name %q does not match %s", tl.Name, toolNameRule)
		}
		if seen[tl.Name] {
			t.Errorf("tool %q built twice", tl.Name)
		}
		seen[tl.Name] = true
	}
	for _, o := range ops {
		if !seen[o.Tool] {
			t.Errorf("%s: no tool %s", o.Origin(), o.Tool)
		}
	}

	calls := sampleCalls(ops)
	if len(calls) != 20 {
		t.Fatalf("sampled %d calls, want 20", len(calls))
	}
	kinds := map[string]int{}
	for _, c := range calls {
		kinds[c.kind]++
		before := len(api.requests())
		res, perr := engine.Call(context.Background(), c.op.Tool, asRequestArguments(t, c.args), &pipeline.RequestInfo{Header: http.Header{}})
		hits := api.requests()[before:]
		if len(hits) != 1 {
			t.Errorf("%s %s (%s): %d requests reached the server, want 1: %+v; call error %v", c.kind, c.op.Tool, c.op.Origin(), len(hits), hits, perr)
			continue
		}
		hit := hits[0]
		if hit.OperationID != c.op.ID {
			t.Errorf("%s %s: reached %q (%s %s), want %s", c.kind, c.op.Tool, hit.OperationID, hit.Method, hit.Path, c.op.Origin())
		}
		if hit.Invalid != "" {
			t.Errorf("%s %s: the server refused %s %s: %s\narguments %v", c.kind, c.op.Tool, hit.Method, hit.Path, hit.Invalid, c.args)
			continue
		}
		for name, want := range c.pathValues {
			if got := hit.PathParams[name]; got != want {
				t.Errorf("%s %s: path parameter %s arrived as %q, want %q", c.kind, c.op.Tool, name, got, want)
			}
		}
		if c.queryArray != "" && len(hit.Query[c.queryArray]) != 2 {
			t.Errorf("%s %s: query array %s arrived as %v (%s), want two values", c.kind, c.op.Tool, c.queryArray, hit.Query[c.queryArray], hit.Path)
		}
		if perr != nil {
			t.Errorf("%s %s: %v", c.kind, c.op.Tool, perr)
			continue
		}
		status, _ := res.Meta["edgemcp/http"].(map[string]any)["status"].(int)
		if want, _ := successStatus(c.op.Op); status != want {
			t.Errorf("%s %s: status %d, want %d", c.kind, c.op.Tool, status, want)
		}
		t.Logf("%-11s %-55s %s %s", c.kind, c.op.Tool, hit.Method, hit.Path)
	}
	t.Logf("sampled calls by kind: %v", kinds)
}

// asRequestArguments is args as a tools/call request carries them: encoded
// and decoded again with UseNumber, as the gateway reads a request.
func asRequestArguments(t *testing.T, args map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}
