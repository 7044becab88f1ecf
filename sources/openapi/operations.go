package openapi

import (
	"fmt"
	"net/http"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// Options say which operations become tools and how they are named.
type Options struct {
	// Prefix starts every tool name, followed by "_" (usually the source's
	// name); empty means no prefix.
	Prefix string
	// Include and Exclude are globs (path.Match) over an operation's
	// operationId, tags, method, path and "METHOD /path". No Include means
	// every operation; Exclude wins.
	Include, Exclude []string
	// Deprecated includes the operations the document marks deprecated.
	Deprecated bool
	// Reserved are the request parts the gateway's credentials set:
	// parameters the document declares for them are not offered to callers.
	Reserved upstream.Reserved
	// Fixed are the parameters the operator sets (`set <param> <value>`),
	// by parameter name: not inputs; their values come from the
	// configuration or the verified caller.
	Fixed map[string]upstream.Fixed

	schema2020 bool           // set by Operations from the document's version
	protected  protectedNames // set by Operations from Reserved and Fixed
}

// Check reports a malformed glob.
func (o Options) Check() error {
	for _, g := range slices.Concat(o.Include, o.Exclude) {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("pattern %q: %v", g, err)
		}
	}
	return nil
}

// Operation is one operation of a document that becomes a tool.
type Operation struct {
	Tool    string   // the tool name
	Aliases []string // other names tools/call accepts: the operationId, "<prefix>.<operationId>"
	Method  string   // upper case
	Path    string   // the path template, as in the document
	ID      string   // operationId, "" when the document has none
	Op      *openapi3.Operation
	Params  []*parameter // path, query, header and cookie parameters, in the document's order
	Body    *requestBody // nil when the operation takes none
	// protected are the names only the gateway sends (credentials' and
	// fixed parameters'): a call whose arguments would produce one is
	// refused (newRequest).
	protected protectedNames
	// schema2020 says the document's schemas are JSON Schema 2020-12
	// (OpenAPI 3.1 and later) rather than OpenAPI 3.0's dialect.
	schema2020 bool
	// inputs indexes the schema of each input by name, and validate holds
	// the options arguments are checked with: both fixed once the
	// parameters and body are known (index), not rebuilt per call.
	inputs   map[string]*openapi3.SchemaRef
	validate []openapi3.SchemaValidationOption
	// fromIdentity is FromIdentity, computed once.
	fromIdentity []string
}

// Origin names the operation for people: "GET /pets/{id} (getPet)".
func (o *Operation) Origin() string {
	s := o.Method + " " + o.Path
	if o.ID != "" {
		s += " (" + o.ID + ")"
	}
	return s
}

// parameter is one parameter and the input property that carries it.
type parameter struct {
	paramSpec
	Property string // the name in the tool's input schema ("" when fixed)
	Required bool
	Schema   *openapi3.SchemaRef
	Desc     string
	Fixed    *upstream.Fixed // set by the operator; never an input
}

// requestBody is the request body an operation takes, in the media type the
// gateway sends it as.
type requestBody struct {
	MediaType string
	Schema    *openapi3.SchemaRef
	Required  bool
	Desc      string
}

// bodyProperty is the input property that carries the request body.
const bodyProperty = "body"

var (
	methods = []string{http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodOptions, http.MethodHead, http.MethodPatch, http.MethodTrace}
)

// Operations returns the operations of doc that opt selects, in a stable
// order (path, then method), each with a tool name that matches
// pipeline.ToolNamePattern. Two operations that would share a name fail,
// naming both.
func Operations(doc *Document, opt Options) ([]*Operation, error) {
	if err := opt.Check(); err != nil {
		return nil, err
	}
	opt.schema2020 = doc.IsOpenAPI31OrLater()
	protected, err := newProtectedNames(opt.Reserved, opt.Fixed)
	if err != nil {
		return nil, err
	}
	opt.protected = protected
	if doc.Paths == nil {
		return nil, nil
	}
	paths := doc.Paths.Map()
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var ops []*Operation
	byName := map[string]*Operation{}
	for _, p := range keys {
		item := paths[p]
		for _, m := range methods {
			op := item.GetOperation(m)
			if op == nil || (op.Deprecated && !opt.Deprecated) || !opt.selects(m, p, op) {
				continue
			}
			o, err := newOperation(opt, m, p, item, op)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %v", m, p, err)
			}
			if prev := byName[o.Tool]; prev != nil {
				return nil, fmt.Errorf("two operations make the tool %q: %s and %s; exclude one or give them distinct operationIds", o.Tool, prev.Origin(), o.Origin())
			}
			byName[o.Tool] = o
			ops = append(ops, o)
		}
	}
	return ops, nil
}

// selects applies Include and Exclude to one operation.
func (opt Options) selects(method, p string, op *openapi3.Operation) bool {
	subjects := append([]string{op.OperationID, method, strings.ToLower(method), p, method + " " + p}, op.Tags...)
	matches := func(globs []string) bool {
		for _, g := range globs {
			for _, s := range subjects {
				if ok, _ := path.Match(g, s); ok && s != "" {
					return true
				}
			}
		}
		return false
	}
	if len(opt.Include) > 0 && !matches(opt.Include) {
		return false
	}
	return !matches(opt.Exclude)
}

func newOperation(opt Options, method, p string, item *openapi3.PathItem, op *openapi3.Operation) (*Operation, error) {
	prefix := opt.Prefix
	o := &Operation{Method: method, Path: p, ID: op.OperationID, Op: op, schema2020: opt.schema2020}
	base := op.OperationID
	if base == "" {
		base = strings.ToLower(method) + "_" + p
	}
	o.Tool = pipeline.ToolName(prefix, base)
	if o.ID != "" {
		for _, a := range []string{o.ID, joinPrefix(prefix, ".", o.ID)} {
			if a != o.Tool && !slices.Contains(o.Aliases, a) {
				o.Aliases = append(o.Aliases, a)
			}
		}
	}
	o.protected = opt.protected
	if err := o.collectParams(item.Parameters, op.Parameters); err != nil {
		return nil, err
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		b, err := chooseBody(op.RequestBody.Value)
		if err != nil {
			return nil, err
		}
		o.Body = b
	}
	o.index()
	return o, nil
}

// index computes what every call of the operation reads: the inputs by
// name, the validation options and the identity values it sends.
func (o *Operation) index() {
	o.inputs = make(map[string]*openapi3.SchemaRef, len(o.Params)+1)
	for _, p := range o.Params {
		if p.Fixed == nil {
			o.inputs[p.Property] = p.Schema
		} else if id := p.Fixed.Identity(); id != "" {
			o.fromIdentity = append(o.fromIdentity, fmt.Sprintf("%s %s: {{ %s }}", p.In, p.Name, id))
		}
	}
	if o.Body != nil {
		o.inputs[bodyProperty] = o.Body.Schema
	}
	o.validate = []openapi3.SchemaValidationOption{openapi3.MultiErrors(), openapi3.DisableReadOnlyValidation()}
	if o.schema2020 {
		o.validate = append(o.validate, openapi3.EnableJSONSchema2020())
	}
}

func joinPrefix(prefix, sep, s string) string {
	if prefix == "" {
		return s
	}
	return prefix + sep + s
}

// collectParams merges the path item's parameters with the operation's
// (the operation's win for the same name and location) and names the
// input property of each. A parameter whose name a credential sets, and
// headers the specification says to ignore, are left out; one whose name
// a `set` fixes takes its value: no argument can set either. Names compare
// as protectedNames does, so `set X-Tenant-Id` fixes a header the document
// spells x-tenant-id. A path parameter's name is not on the wire (but for
// the matrix style, which newRequest checks), so only `set` takes it.
func (o *Operation) collectParams(shared, own openapi3.Parameters) error {
	type key struct{ name, in string }
	var order []key
	byKey := map[key]*openapi3.Parameter{}
	for _, list := range []openapi3.Parameters{shared, own} {
		for _, ref := range list {
			if ref == nil || ref.Value == nil {
				continue
			}
			v := ref.Value
			if v.In == openapi3.ParameterInHeader && ignoredHeader(v.Name) {
				continue
			}
			if p, ok := o.protected.lookup(v.Name); ok && p.fixed == nil && v.In != openapi3.ParameterInPath {
				continue
			}
			k := key{v.Name, v.In}
			if _, seen := byKey[k]; !seen {
				order = append(order, k)
			}
			byKey[k] = ref.Value
		}
	}
	taken := map[string]bool{bodyProperty: true}
	count := map[string]int{}
	for _, k := range order {
		count[k.name]++
	}
	for _, k := range order {
		p := byKey[k]
		if f, ok := o.protected.lookup(p.Name); ok && f.fixed != nil {
			spec := paramSpec{Name: p.Name, In: p.In, Style: p.Style, Explode: p.Explode, AllowReserved: p.AllowReserved}
			if err := spec.validate(); err != nil {
				return err
			}
			o.Params = append(o.Params, &parameter{paramSpec: spec, Schema: p.Schema, Fixed: f.fixed})
			continue
		}
		prop := p.Name
		// A name used in two locations (an "id" in the path and in a
		// header), or one that is "body", is qualified by its location.
		if count[p.Name] > 1 || taken[prop] {
			prop = p.In + "_" + p.Name
		}
		if taken[prop] {
			return fmt.Errorf("parameter %q in %s: its input name %q is taken", p.Name, p.In, prop)
		}
		taken[prop] = true
		spec := paramSpec{Name: p.Name, In: p.In, Style: p.Style, Explode: p.Explode, AllowReserved: p.AllowReserved}
		if err := spec.validate(); err != nil {
			return err
		}
		schema := p.Schema
		if schema == nil && len(p.Content) > 0 { // a parameter described by content: its one media type's schema
			for _, mt := range p.Content {
				schema = mt.Schema
			}
		}
		o.Params = append(o.Params, &parameter{paramSpec: spec, Property: prop, Required: p.Required || p.In == openapi3.ParameterInPath, Schema: schema, Desc: p.Description})
	}
	for _, seg := range pathParams(o.Path) {
		if !slices.ContainsFunc(o.Params, func(p *parameter) bool { return p.In == openapi3.ParameterInPath && p.Name == seg }) {
			return fmt.Errorf("the path names {%s}, which no parameter declares", seg)
		}
	}
	return nil
}

var pathParam = regexp.MustCompile(`\{([^{}]+)\}`)

// pathParams are the names in a path template's braces.
func pathParams(p string) []string {
	var names []string
	for _, m := range pathParam.FindAllStringSubmatch(p, -1) {
		names = append(names, m[1])
	}
	return names
}

// bodyTypes are the media types the gateway can send, in the order it
// prefers them when an operation accepts several.
var bodyTypes = []string{"application/json", "application/x-www-form-urlencoded", "multipart/form-data", "text/plain"}

// chooseBody picks the media type a request body is sent as.
func chooseBody(rb *openapi3.RequestBody) (*requestBody, error) {
	pick := func(mt string, m *openapi3.MediaType) *requestBody {
		b := &requestBody{MediaType: mt, Required: rb.Required, Desc: rb.Description}
		if m != nil {
			b.Schema = m.Schema
		}
		return b
	}
	for _, want := range bodyTypes {
		if m, ok := rb.Content[want]; ok {
			return pick(want, m), nil
		}
	}
	// application/vnd.x+json and the like are JSON; text/* is text.
	names := make([]string, 0, len(rb.Content))
	for mt := range rb.Content {
		names = append(names, mt)
	}
	sort.Strings(names)
	for _, mt := range names {
		if strings.HasSuffix(mt, "+json") || strings.HasPrefix(mt, "text/") || mt == "application/octet-stream" {
			return pick(mt, rb.Content[mt]), nil
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	return nil, fmt.Errorf("request body: no media type the gateway can send (the document offers %s)", strings.Join(names, ", "))
}

// InputSchema is the tool's input schema: one property per parameter and
// "body" for the request body.
func (o *Operation) InputSchema() map[string]any {
	props := map[string]any{}
	var required []string
	for _, p := range o.Params {
		if p.Fixed != nil {
			continue // the operator's, not the caller's
		}
		s := jsonSchema(p.Schema, forRequest)
		if p.Desc != "" {
			s["description"] = p.Desc
		}
		if p.Property != p.Name {
			s["description"] = strings.TrimSpace(fmt.Sprintf("%s (the %s parameter %q)", p.Desc, p.In, p.Name))
		}
		props[p.Property] = s
		if p.Required {
			required = append(required, p.Property)
		}
	}
	if o.Body != nil {
		s := jsonSchema(o.Body.Schema, forRequest)
		if o.Body.Desc != "" {
			s["description"] = o.Body.Desc
		}
		props[bodyProperty] = s
		if o.Body.Required {
			required = append(required, bodyProperty)
		}
	}
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// OutputSchema is the JSON Schema of the operation's success response when
// that is a JSON object (MCP's outputSchema must describe an object), else
// nil.
func (o *Operation) OutputSchema() map[string]any {
	if o.Op.Responses == nil {
		return nil
	}
	for _, code := range []string{"200", "201", "202", "203", "2XX"} {
		r := o.Op.Responses.Value(code)
		if r == nil || r.Value == nil {
			continue
		}
		for mt, m := range r.Value.Content {
			if !isJSON(mt) || m.Schema == nil || m.Schema.Value == nil {
				continue
			}
			if isObject(m.Schema.Value, 0) {
				out := jsonSchema(m.Schema, forResponse)
				out["type"] = "object" // MCP's outputSchema states it at the root, even for an allOf
				return out
			}
		}
		return nil
	}
	return nil
}

// isObject reports whether every value a schema accepts is an object:
// type object, or no type with properties, or an allOf of such schemas.
func isObject(s *openapi3.Schema, depth int) bool {
	if s.Type.Is("object") {
		return true
	}
	if !s.Type.IsEmpty() || depth > maxSchemaDepth {
		return false
	}
	if len(s.Properties) > 0 {
		return true
	}
	for _, a := range s.AllOf {
		if a != nil && a.Value != nil && isObject(a.Value, depth+1) {
			return true
		}
	}
	return false
}

// FromIdentity names the caller's values the operation's requests carry.
func (o *Operation) FromIdentity() []string { return o.fromIdentity }

// Description is what tools/list says of the tool.
func (o *Operation) Description() string {
	parts := []string{}
	for _, s := range []string{o.Op.Summary, o.Op.Description} {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return o.Method + " " + o.Path
	}
	return strings.Join(parts, "\n\n")
}

// Annotations follow from the HTTP method's semantics (RFC 9110): GET and
// HEAD are safe, PUT and DELETE idempotent, DELETE destroys; every call
// reaches another system.
func (o *Operation) Annotations() pipeline.Annotations {
	t, f := true, false
	a := pipeline.Annotations{OpenWorld: &t}
	switch o.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		a.ReadOnly = &t
	case http.MethodPut:
		a.ReadOnly, a.Idempotent, a.Destructive = &f, &t, &f
	case http.MethodDelete:
		a.ReadOnly, a.Idempotent, a.Destructive = &f, &t, &t
	default:
		a.ReadOnly = &f
	}
	return a
}

// isJSON reports whether a media type carries JSON.
func isJSON(mt string) bool {
	mt, _, _ = strings.Cut(mt, ";")
	mt = strings.TrimSpace(strings.ToLower(mt))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}
