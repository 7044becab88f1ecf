package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"os"
	"slices"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/yosida95/uritemplate/v3"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/script"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// Resources declared in the Caddyfile (README, Resources): a URI, or an
// RFC 6570 URI template, backed by a statement or a script handler. Each
// is compiled into a pipeline.Tool whose inputs are the template's
// variables, so a read runs the very stages of a tools/call (auth, input
// validation, bound parameters, execution) and a value from the URI is
// bound exactly as a tool's input is, never spliced.

// ResourceConfig is `resource <uri-or-template> { ... }`.
type ResourceConfig struct {
	// URI is a URI (a resource) or a URI template with {variables} (a
	// resource template).
	URI         string `json:"uri"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// MimeType is the contents' type (default application/json: the
	// result as JSON). Any other type takes the one value the statement
	// returns (one row, one column) or the string the handler returns.
	MimeType  string `json:"mime_type,omitempty"`
	Use       string `json:"use,omitempty"`
	Statement string `json:"statement,omitempty"`
	// Inputs give the template variables a type, an enum (completion
	// offers its values) or a description; an undeclared variable is a
	// required string.
	Inputs []InputConfig     `json:"inputs,omitempty"`
	Auth   *AuthPolicyConfig `json:"auth,omitempty"`
	// Approval "off" serves the resource although its connector has an
	// approval policy (resourceApproval).
	Approval string `json:"approval,omitempty"`
	// ToolScripts: a handler instead of use + statement, mappers, settings.
	ToolScripts

	at, statementAt string // Caddyfile file:line, for adapt-time errors
}

const defaultResourceMime = "application/json"

// parseResource reads `resource <uri-or-template> { ... }`.
func parseResource(d *caddyfile.Dispenser) (ResourceConfig, error) {
	var r ResourceConfig
	if !d.NextArg() {
		return r, d.Errf("usage: resource <uri-or-uri-template> { use <connector>; statement ...; mime_type ...; description ... }")
	}
	r.URI = d.Val()
	r.at = d.File() + ":" + fmt.Sprint(d.Line())
	if d.NextArg() {
		return r, d.ArgErr()
	}
	vars, err := resourceVars(r.URI)
	if err != nil {
		return r, d.Errf("resource %q: %v", r.URI, err)
	}
	// The block's tool-like parts are read as a tool's, by the same code.
	tc := ToolConfig{Name: r.URI}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch sub := d.Val(); sub {
		case "name":
			if err := oneArg(d, &r.Name); err != nil {
				return r, err
			}
		case "title":
			if err := oneArg(d, &r.Title); err != nil {
				return r, err
			}
		case "description":
			if err := oneArg(d, &r.Description); err != nil {
				return r, err
			}
		case "mime_type":
			if err := oneArg(d, &r.MimeType); err != nil {
				return r, err
			}
			if _, _, err := mime.ParseMediaType(r.MimeType); err != nil {
				return r, d.Errf("resource %q: mime_type %q: %v", r.URI, r.MimeType, err)
			}
		case "use":
			if err := oneArg(d, &r.Use); err != nil {
				return r, err
			}
		case "statement":
			r.statementAt = d.File() + ":" + fmt.Sprint(d.Line())
			if err := oneArg(d, &r.Statement); err != nil {
				return r, err
			}
		case "input":
			in, err := parseInput(d, r.URI)
			if err != nil {
				return r, err
			}
			if !slices.Contains(vars, in.Name) {
				return r, d.Errf("resource %q: input %q is not a variable of the URI template (it has: %s)", r.URI, in.Name, strings.Join(vars, ", "))
			}
			if in.Default != nil || in.Required {
				return r, d.Errf("resource %q: input %q: a template variable is always given by the URI (no required or default)", r.URI, in.Name)
			}
			if t, _ := pipeline.ParseType(in.Type); t.Kind == pipeline.KindArray || t.Kind == pipeline.KindObject {
				return r, d.Errf("resource %q: input %q: a template variable is one value (string, integer, number, boolean, datetime), not %s", r.URI, in.Name, in.Type)
			}
			for _, other := range r.Inputs {
				if other.Name == in.Name {
					return r, d.Errf("resource %q: input %q declared twice", r.URI, in.Name)
				}
			}
			r.Inputs = append(r.Inputs, in)
		case "auth":
			a, err := parseToolAuth(d, r.URI)
			if err != nil {
				return r, fmt.Errorf("resource%s", strings.TrimPrefix(err.Error(), "tool"))
			}
			r.Auth = a
		case "approval":
			p, err := parseApproval(d, fmt.Sprintf("resource %q", r.URI), approvalOff)
			if err != nil {
				return r, err
			}
			r.Approval = p
		case "handler", "mappers", "script_timeout", "fetch_allow", "script_max_input", "script_max_output", "script_max_memory":
			tc.ToolScripts = r.ToolScripts
			if err := parseToolScripts(d, &tc); err != nil {
				return r, err
			}
			r.ToolScripts = tc.ToolScripts
		default:
			return r, d.Errf("resource %q: unrecognized sub-directive %q (want name, title, description, mime_type, use, statement, input, handler, mappers, auth, approval)", r.URI, sub)
		}
	}
	switch {
	case r.Handler != "" && (r.Use != "" || r.Statement != ""):
		return r, d.Errf("resource %q: a resource runs either a statement ('use' + 'statement') or a 'handler', not both", r.URI)
	case r.Handler != "":
	case r.Use == "":
		return r, d.Errf("resource %q: missing 'use <connector>' + 'statement', or 'handler <file>'", r.URI)
	case strings.TrimSpace(r.Statement) == "":
		return r, d.Errf("resource %q: missing 'statement'", r.URI)
	}
	if r.Name == "" {
		r.Name = pipeline.ToolName("", r.URI)
	}
	if !pipeline.ToolNamePattern.MatchString(r.Name) {
		return r, d.Errf("resource %q: name %q must match %s", r.URI, r.Name, pipeline.ToolNamePattern)
	}
	return r, nil
}

// resourceVars parses a URI template and returns its variable names; a
// plain URI has none.
func resourceVars(uri string) ([]string, error) {
	if strings.TrimSpace(uri) == "" || strings.ContainsAny(uri, " \t\n") {
		return nil, errors.New("want a URI or URI template without spaces")
	}
	t, err := uritemplate.New(uri)
	if err != nil {
		return nil, fmt.Errorf("not a URI template (RFC 6570): %v", err)
	}
	if !strings.Contains(uri, ":") {
		return nil, errors.New("want an absolute URI with a scheme (e.g. docs://{id} or file:///notes)")
	}
	return t.Varnames(), nil
}

// checkResourcesAtAdapt refuses, at the Caddyfile line, two resources with
// one URI or one name, and a statement its connector's dialect refuses.
func (h *Handler) checkResourcesAtAdapt() error {
	conns := make(map[string]ConnectorConfig, len(h.Connectors))
	for _, c := range h.Connectors {
		conns[c.Name] = c
	}
	for i, r := range h.Resources {
		for _, other := range h.Resources[:i] {
			if other.URI == r.URI {
				return fmt.Errorf("resource %q declared twice", r.URI)
			}
			if other.Name == r.Name {
				return fmt.Errorf("resources %q and %q are both named %q (set name in one of them)", other.URI, r.URI, r.Name)
			}
		}
		c, ok := conns[r.Use]
		if !ok {
			continue
		}
		if err := resourceApproval(r, c); err != nil {
			return fmt.Errorf("%v, at %s", err, r.at)
		}
		if d, ok := sqlDialect(c); ok {
			if err := sqltemplate.Check(r.Statement, d, statementRules(c, c.ReadOnly)); err != nil {
				return fmt.Errorf("resource %q: statement: %v, at %s", r.URI, err, r.statementAt)
			}
		}
	}
	return nil
}

// resourceApproval refuses a resource its connector's approval policy
// would cover (README, Approvals): a statement can write, and a read has no
// call a person could approve (clients read resources as context, often
// with no one asked), so the operator says which they mean: "approval
// off" in the resource, or, under `approval writes`, a read_only
// connector for it.
func resourceApproval(r ResourceConfig, c ConnectorConfig) error {
	if r.Approval == approvalOff || !(c.Approval == approvalRequired || c.Approval == approvalWrites && !c.ReadOnly) {
		return nil
	}
	other := ""
	if c.Approval == approvalWrites {
		other = ", or give it a read_only connector"
	}
	return fmt.Errorf("resource %q runs on connector %q, which has approval %s, but a resource read cannot be approved: write \"approval off\" in the resource to serve it without approval%s", r.URI, c.Name, c.Approval, other)
}

// toolConfig is the resource as the tool it runs as: named by its name,
// with an input for every template variable.
func (r ResourceConfig) toolConfig() (ToolConfig, error) {
	vars, err := resourceVars(r.URI)
	if err != nil {
		return ToolConfig{}, fmt.Errorf("resource %q: %v", r.URI, err)
	}
	tc := ToolConfig{Name: r.Name, Description: "resource " + r.URI, Use: r.Use, Statement: r.Statement,
		Auth: r.Auth, ToolScripts: r.ToolScripts, statementAt: r.statementAt}
	for _, v := range vars {
		in := InputConfig{Name: v, Type: "string", Required: true}
		for _, declared := range r.Inputs {
			if declared.Name == v {
				in = declared
				in.Required = true
			}
		}
		tc.Inputs = append(tc.Inputs, in)
	}
	for _, declared := range r.Inputs {
		if !slices.Contains(vars, declared.Name) {
			return tc, fmt.Errorf("resource %q: input %q is not a variable of the URI template", r.URI, declared.Name)
		}
	}
	return tc, nil
}

// declaredResource is a provisioned resource.
type declaredResource struct {
	config   ResourceConfig
	tool     *pipeline.Tool
	template bool // the URI has variables
}

// buildResources compiles the declared resources into tools, run by an
// engine of their own (so that they are never listed or called as tools).
func (h *Handler) buildResources(ctx caddy.Context, conns map[string]connectorRef, repl *caddy.Replacer, scripts *script.Loader) error {
	h.resources = nil
	tools := make([]*pipeline.Tool, 0, len(h.Resources))
	uris := map[string]bool{}
	for _, rc := range h.Resources {
		if uris[rc.URI] {
			return fmt.Errorf("resource %q declared twice", rc.URI)
		}
		uris[rc.URI] = true
		if rc.Name == "" {
			rc.Name = pipeline.ToolName("", rc.URI)
		}
		tc, err := rc.toolConfig()
		if err != nil {
			return err
		}
		if err := resourceApproval(rc, conns[rc.Use].config); err != nil {
			return err
		}
		where := func(err error) error {
			return fmt.Errorf("resource %q: %s", rc.URI, strings.TrimPrefix(err.Error(), fmt.Sprintf("tool %q: ", tc.Name)))
		}
		t, err := buildTool(tc, conns, repl, os.LookupEnv)
		if err != nil {
			return where(err)
		}
		if t.Auth, err = h.policyAuth(rc.Auth, fmt.Sprintf("resource %q", rc.URI)); err != nil {
			return err
		}
		if err := checkIdentityValues(t); err != nil {
			return where(err)
		}
		if err := h.attachScripts(ctx, t, tc, scripts, repl); err != nil {
			return where(err)
		}
		rc.Description = repl.ReplaceKnown(rc.Description, "")
		rc.Title = repl.ReplaceKnown(rc.Title, "")
		vars, _ := resourceVars(rc.URI)
		h.resources = append(h.resources, &declaredResource{config: rc, tool: t, template: len(vars) > 0})
		tools = append(tools, t)
	}
	engine, err := pipeline.NewEngine(tools)
	if err != nil {
		return err
	}
	h.resourceEngine = engine
	return nil
}

func (r *declaredResource) mimeType() string {
	if r.config.MimeType == "" {
		return defaultResourceMime
	}
	return r.config.MimeType
}

// serverResources are the mcp-go entries of the declared resources and
// resource templates.
func (h *Handler) serverResources() ([]server.ServerResource, []server.ServerResourceTemplate) {
	var res []server.ServerResource
	var tmpl []server.ServerResourceTemplate
	for _, r := range h.resources {
		c := r.config
		if !r.template {
			res = append(res, server.ServerResource{
				Resource: mcp.Resource{URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MIMEType: r.mimeType()},
				Handler:  server.ResourceHandlerFunc(h.resourceHandler(r)),
			})
			continue
		}
		t := mcp.NewResourceTemplate(c.URI, c.Name, mcp.WithTemplateDescription(c.Description), mcp.WithTemplateMIMEType(r.mimeType()))
		t.Title = c.Title
		tmpl = append(tmpl, server.ServerResourceTemplate{Template: t, Handler: h.resourceHandler(r)})
	}
	return res, tmpl
}

// resourceHandler reads a resource through the pipeline. A caller its
// policy refuses learns nothing: the answer is "resource not found", as
// for a URI that matches nothing.
func (h *Handler) resourceHandler(r *declaredResource) server.ResourceTemplateHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		st := callStateFrom(ctx)
		fail := func(perr *pipeline.Error) ([]mcp.ResourceContents, error) {
			if st != nil {
				st.fail(perr)
			}
			return nil, perr
		}
		if !h.allowed(ctx, r.tool.Auth, r.tool.Name) {
			return fail(resourceNotFound(ctx, req.Params.URI))
		}
		args := make(map[string]any, len(req.Params.Arguments))
		for k, v := range req.Params.Arguments {
			if list, ok := v.([]string); ok {
				if len(list) != 1 {
					return fail(pipeline.Fail(pipeline.StageValidation, nil, "input %q: expected one value, got %d", k, len(list)))
				}
				v = list[0]
			}
			args[k] = v
		}
		res, perr := h.resourceEngine.Call(ctx, r.tool.Name, args, requestInfo(ctx, st))
		if perr == nil {
			var contents mcp.ResourceContents
			contents, perr = resourceContents(res, req.Params.URI, r.mimeType())
			if perr == nil {
				return []mcp.ResourceContents{contents}, nil
			}
			if perr.Code == mcp.RESOURCE_NOT_FOUND {
				return fail(resourceNotFound(ctx, req.Params.URI))
			}
		}
		if h.ErrorDetail != errorDetailFull {
			perr = perr.WithoutServerText(requestID(ctx))
		}
		return fail(perr)
	}
}

// resourceNotFound is the protocol's answer for an unknown URI: -32002
// until 2026-07-28, which answers -32602 (as mcp-go does for a URI that
// matches no resource).
func resourceNotFound(ctx context.Context, uri string) *pipeline.Error {
	code := mcp.RESOURCE_NOT_FOUND
	if mcp.IsModernProtocol(server.RequestProtocolVersion(ctx)) {
		code = mcp.INVALID_PARAMS
	}
	return &pipeline.Error{Code: code, Stage: pipeline.StageResolution, Message: fmt.Sprintf("resource %q not found", uri)}
}

// resourceContents shapes a result for resources/read: JSON as text for a
// JSON type; for any other type, the one value the resource returned (a
// string, or one row of one column) as text. No row at all, or a null, is
// "not found".
func resourceContents(res *pipeline.Result, uri, mimeType string) (mcp.ResourceContents, *pipeline.Error) {
	value := res.Value
	if res.Native != nil {
		value = res.Native
	}
	if isJSONMime(mimeType) {
		text, err := json.Marshal(value)
		if err != nil {
			return nil, pipeline.Fail(pipeline.StageResponse, err, "result is not JSON-encodable")
		}
		return mcp.TextResourceContents{URI: uri, MIMEType: mimeType, Text: string(text)}, nil
	}
	switch v := value.(type) {
	case *pipeline.Rows:
		if v == nil || len(v.Values) == 0 {
			return nil, &pipeline.Error{Code: mcp.RESOURCE_NOT_FOUND}
		}
		if len(v.Values) != 1 || len(v.Columns) != 1 {
			return nil, pipeline.Fail(pipeline.StageResponse, nil, "mime_type %s needs one value: the statement returned %d rows of %d columns", mimeType, len(v.Values), len(v.Columns))
		}
		value = v.Values[0][0]
	case json.RawMessage: // a script's value
		var decoded any
		if err := json.Unmarshal(v, &decoded); err != nil {
			return nil, pipeline.Fail(pipeline.StageResponse, err, "handler returned invalid JSON")
		}
		value = decoded
	}
	switch v := value.(type) {
	case nil:
		return nil, &pipeline.Error{Code: mcp.RESOURCE_NOT_FOUND}
	case string:
		return mcp.TextResourceContents{URI: uri, MIMEType: mimeType, Text: v}, nil
	}
	return nil, pipeline.Fail(pipeline.StageResponse, nil, "mime_type %s needs a string value, got %T (use mime_type application/json for structured results)", mimeType, value)
}

func isJSONMime(t string) bool {
	mt, _, err := mime.ParseMediaType(t)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// resourceFilter takes, from a resources/list or resources/templates/list
// answer, the declared entries the caller's identity may not read.
func (h *Handler) resourceAllowed(ctx context.Context, uri string) bool {
	if len(h.providers) == 0 {
		return true
	}
	for _, r := range h.resources {
		if r.config.URI == uri {
			return h.allowed(ctx, r.tool.Auth, r.tool.Name)
		}
	}
	return true
}

// resourceHooks filter the resource lists per caller: mcp-go has no
// resource filter, so the answers are trimmed after it built them (its
// default lists are one page; the gateway sets no pagination limit).
func (h *Handler) resourceHooks(hooks *server.Hooks) {
	hooks.AddAfterListResources(func(ctx context.Context, _ any, _ *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		res.Resources = slices.DeleteFunc(res.Resources, func(r mcp.Resource) bool { return !h.resourceAllowed(ctx, r.URI) })
	})
	hooks.AddAfterListResourceTemplates(func(ctx context.Context, _ any, _ *mcp.ListResourceTemplatesRequest, res *mcp.ListResourceTemplatesResult) {
		res.ResourceTemplates = slices.DeleteFunc(res.ResourceTemplates, func(t mcp.ResourceTemplate) bool {
			return t.URITemplate != nil && (t.URITemplate.Raw() == catchAllTemplate || !h.resourceAllowed(ctx, t.URITemplate.Raw()))
		})
	})
}
