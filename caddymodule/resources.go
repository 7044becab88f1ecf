package caddymodule

import (
	"fmt"
	"mime"
	"os"
	"slices"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/edgemcp/edgemcp/caddymodule/resources"
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
	vars, err := resources.Vars(r.URI)
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
	vars, err := resources.Vars(r.URI)
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

// buildResources compiles the declared resources into tools and hands
// them to resources.Set, which serves them.
func (h *Handler) buildResources(ctx caddy.Context, conns map[string]connectorRef, repl *caddy.Replacer, scripts *script.Loader) error {
	list := make([]*resources.Resource, 0, len(h.Resources))
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
		vars, _ := resources.Vars(rc.URI)
		list = append(list, &resources.Resource{URI: rc.URI, Name: rc.Name, MimeType: rc.MimeType, Tool: t, Template: len(vars) > 0,
			Title: repl.ReplaceKnown(rc.Title, ""), Description: repl.ReplaceKnown(rc.Description, "")})
	}
	set, err := resources.New(list, requestAccess{h})
	if err != nil {
		return err
	}
	h.resources = set
	return nil
}
