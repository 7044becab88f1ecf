package caddymodule

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/caddymodule/resources"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/script"
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
	// Cache puts its reads in the result cache, as a tool's `cache` line
	// does; without one a resource is never cached (default_ttl is the
	// tools'). Its answers on 2026-07-28 say what the cache decided
	// (ttlMs, cacheScope).
	Cache *ToolCacheConfig `json:"cache,omitempty"`
	// ToolScripts: a handler instead of use + statement, mappers, settings.
	ToolScripts

	at, statementAt string // Caddyfile file:line, for adapt-time errors
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
