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
	// Strict fails on an operation the gateway cannot serve, instead of
	// leaving it out.
	Strict bool
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
	// target and query are what the template sends (splitTemplate): the
	// path, and the query pairs the template itself carries, with those
	// of declared query parameters left to the parameters.
	target, query string
	ID            string // operationId, "" when the document has none
	Op            *openapi3.Operation
	Params        []*parameter // path, query, header and cookie parameters, in the document's order
	Body          *requestBody // nil when the operation takes none
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

// bodyProperty is the input property that carries the request body.
const bodyProperty = "body"

var (
	methods = []string{http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodOptions, http.MethodHead, http.MethodPatch, http.MethodTrace}
)

// Skipped is an operation left out of the tools, and why.
type Skipped struct {
	Operation string // "GET /pets/{id} (getPet)"
	Reason    string
}

// Operations returns the operations of doc that opt selects, in a stable
// order (path, then method), each with a tool name that matches
// pipeline.ToolNamePattern. An operation the gateway cannot serve (its
// validation failed, it has no body the gateway can send, its name is
// another's) is left out and listed in skipped; with opt.Strict it fails
// the whole instead.
func Operations(doc *Document, opt Options) (ops []*Operation, skipped []Skipped, err error) {
	if err := opt.Check(); err != nil {
		return nil, nil, err
	}
	opt.schema2020 = doc.IsOpenAPI31OrLater()
	protected, err := newProtectedNames(opt.Reserved, opt.Fixed)
	if err != nil {
		return nil, nil, err
	}
	opt.protected = protected
	if doc.Paths == nil {
		return nil, nil, nil
	}
	paths := doc.Paths.Map()
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	byName := map[string]*Operation{}
	for _, p := range keys {
		item := paths[p]
		for _, m := range methods {
			op := item.GetOperation(m)
			if op == nil || (op.Deprecated && !opt.Deprecated) || !opt.selects(m, p, op) {
				continue
			}
			origin := (&Operation{Method: m, Path: p, ID: op.OperationID}).Origin()
			why, invalid := doc.invalid[opKey{m, p}]
			if invalid && why == "" {
				why = "invalid"
			}
			var o *Operation
			if !invalid {
				if o, err = newOperation(opt, m, p, item, op); err != nil {
					why = err.Error()
				} else if prev := byName[o.Tool]; prev != nil {
					why = fmt.Sprintf("its tool name %q is taken by %s; exclude one or give them distinct operationIds", o.Tool, prev.Origin())
				}
			}
			if why != "" {
				if opt.Strict {
					return nil, nil, fmt.Errorf("%s: %s", origin, why)
				}
				skipped = append(skipped, Skipped{Operation: origin, Reason: why})
				continue
			}
			byName[o.Tool] = o
			ops = append(ops, o)
		}
	}
	return ops, skipped, nil
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
		b, err := chooseBody(op.RequestBody.Value, opt.schema2020)
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
	o.validate = []openapi3.SchemaValidationOption{openapi3.MultiErrors(), openapi3.DisableReadOnlyValidation(), openapi3.SetSchemaRegexCompiler(argumentPatterns)}
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
	o.target, o.query = splitTemplate(o.Path)
	o.query = templateQuery(o.query, func(name string) bool { return declaresQuery(name, shared, own) })
	for _, seg := range pathParams(o.target + "?" + o.query) {
		if !slices.ContainsFunc(o.Params, func(p *parameter) bool { return p.In == openapi3.ParameterInPath && p.Name == seg }) {
			return fmt.Errorf("the path names {%s}, which no parameter declares", seg)
		}
	}
	return o.protected.checkTemplate(o.query)
}

// declaresQuery reports whether the lists declare a query parameter name,
// whose pair "name={name}" in a template's query the parameter sends
// (templateQuery), or, when a credential sets the name, the credential.
func declaresQuery(name string, lists ...openapi3.Parameters) bool {
	for _, list := range lists {
		for _, ref := range list {
			if ref != nil && ref.Value != nil && ref.Value.In == openapi3.ParameterInQuery && ref.Value.Name == name {
				return true
			}
		}
	}
	return false
}

// splitTemplate cuts a path template into the path a request goes to and
// the query the template itself carries. "#..." is a fragment, which is
// never sent (APIs.guru's AWS documents tell operations on one path apart
// by it: "/#X-Amz-Target=..."); "?a=1&b={b}" is a query written into the
// template, sent before the parameters'.
func splitTemplate(p string) (target, query string) {
	p, _, _ = strings.Cut(p, "#")
	target, query, _ = strings.Cut(p, "?")
	return target, query
}

// templateQuery drops the pairs "name={name}" of a template's query whose
// variable is a declared query parameter (isQuery): the parameter's own
// serialization sends it. The rest (literal pairs, variables declared as
// path parameters) stays.
func templateQuery(q string, isQuery func(name string) bool) string {
	if q == "" {
		return ""
	}
	var kept []string
	for _, pair := range strings.Split(q, "&") {
		name, val, _ := strings.Cut(pair, "=")
		if val == "{"+name+"}" && isQuery(name) {
			continue
		}
		kept = append(kept, pair)
	}
	return strings.Join(kept, "&")
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

// InputSchema is the tool's input schema: one property per parameter and
// "body" for the request body.
func (o *Operation) InputSchema() map[string]any { return o.inputSchema(nil) }

// inputSchema is InputSchema, adding the patterns it leaves out to dropped.
func (o *Operation) inputSchema(dropped *[]string) map[string]any {
	props := map[string]any{}
	var required []string
	for _, p := range o.Params {
		if p.Fixed != nil {
			continue // the operator's, not the caller's
		}
		s := jsonSchema(p.Schema, forRequest, dropped)
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
		props[bodyProperty] = o.Body.inputSchema(dropped)
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
func (o *Operation) OutputSchema() map[string]any { return o.outputSchema(nil) }

// outputSchema is OutputSchema, adding the patterns it leaves out to dropped.
func (o *Operation) outputSchema(dropped *[]string) map[string]any {
	ref := o.outputRef()
	if ref == nil {
		return nil
	}
	out := jsonSchema(ref, forResponse, dropped)
	out["type"] = "object" // MCP's outputSchema states it at the root, even for an allOf
	return out
}

// outputRef is the schema of the first success response whose JSON media
// type (the first in sorted order) describes an object; nil when the
// first success response has none.
func (o *Operation) outputRef() *openapi3.SchemaRef {
	if o.Op.Responses == nil {
		return nil
	}
	for _, code := range []string{"200", "201", "202", "203", "2XX"} {
		r := o.Op.Responses.Value(code)
		if r == nil || r.Value == nil {
			continue
		}
		types := make([]string, 0, len(r.Value.Content))
		for mt := range r.Value.Content {
			types = append(types, mt)
		}
		sort.Strings(types)
		for _, mt := range types {
			m := r.Value.Content[mt]
			if isJSON(mt) && m != nil && m.Schema != nil && m.Schema.Value != nil && isObject(m.Schema.Value, 0) {
				return m.Schema
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

// isJSON reports whether a media type carries one JSON value:
// application/json (with any parameters), a +json suffix, or an x- type
// named for JSON (AWS's application/x-amz-json-1.1), but not the streams
// of values (x-ndjson, x-jsonlines).
func isJSON(mt string) bool {
	mt, _, _ = strings.Cut(mt, ";")
	mt = strings.TrimSpace(strings.ToLower(mt))
	if mt == "application/json" || strings.HasSuffix(mt, "+json") {
		return true
	}
	sub, ok := strings.CutPrefix(mt, "application/x-")
	return ok && strings.Contains(sub, "json") && !strings.Contains(sub, "ndjson") && !strings.Contains(sub, "jsonl")
}
