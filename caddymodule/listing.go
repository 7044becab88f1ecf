package caddymodule

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/caddymodule/cli"
	"github.com/edgemcp/edgemcp/caddymodule/redact"
	"github.com/edgemcp/edgemcp/caddymodule/resources"
	"github.com/edgemcp/edgemcp/pipeline"
)

// Keys of the handler and tool JSON that the listing shows in its own
// fields (or deliberately not at all); every other key is a setting.
var (
	knownHandlerKeys = map[string]bool{"handler": true, "name": true, "version": true, "error_mode": true,
		"connectors": true, "tools": true, "catalog_off": true, "max_body_size": true,
		"session_idle_timeout": true, "allowed_origins": true, "resources": true, "prompts": true,
		"sql_tools": true, "toolsets": true}
	knownToolKeys = map[string]bool{"name": true, "title": true, "description": true, "use": true,
		"statement": true, "inputs": true, "annotations": true, "cache": true, "auth": true, "approval": true}
)

// endpointOf lists one mcp handler from its JSON, redacted first: every
// part of the listing comes from the redacted config.
func endpointOf(raw json.RawMessage) (cli.Endpoint, error) {
	raw, _ = redact.JSON(raw)
	var h Handler
	if err := json.Unmarshal(raw, &h); err != nil {
		return cli.Endpoint{}, fmt.Errorf("mcp handler: %v", err)
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(raw, &keys)
	e := cli.Endpoint{Name: h.ServerName, Version: h.ServerVersion, ErrorMode: h.ErrorMode,
		Catalog: !h.CatalogOff, Settings: extraSettings(keys, knownHandlerKeys)}
	if e.Name == "" {
		e.Name = defaultServerName
	}
	connTypes := map[string]string{}
	connCfg := map[string]ConnectorConfig{}
	for _, c := range h.Connectors {
		connCfg[c.Name] = c
		cl := cli.Connector{Name: c.Name, Type: c.Type, ReadOnly: c.ReadOnly, MaxConns: c.MaxConns, MaxRows: c.MaxRows, MaxResultSize: c.MaxResultSize}
		if c.StatementTimeout > 0 {
			cl.StatementTimeout = time.Duration(c.StatementTimeout).String()
		}
		e.Connectors = append(e.Connectors, cl)
		connTypes[c.Name] = c.Type
	}
	var rawTools []map[string]json.RawMessage
	_ = json.Unmarshal(keys["tools"], &rawTools)
	e.Tools = []cli.Tool{}
	for i, tc := range h.Tools {
		tl := cli.Tool{Name: tc.Name, Title: tc.Title, Description: tc.Description,
			Connector: tc.Use, Type: connTypes[tc.Use], Inputs: listedInputs(tc.Inputs)}
		if tl.Inputs == nil {
			tl.Inputs = []cli.Input{}
		}
		if a := tc.Annotations; a != nil {
			tl.Annotations = annotationList(a)
		}
		tl.Cache, tl.Auth = cacheSummary(tc.Cache), authSummary(tc.Auth)
		tl.FromIdentity = statementIdentity(tc.Statement, connCfg[tc.Use])
		tl.Approval = declaredApproval(tc, connCfg[tc.Use])
		if i < len(rawTools) {
			tl.Settings = extraSettings(rawTools[i], knownToolKeys)
		}
		e.Tools = append(e.Tools, tl)
	}
	for _, sc := range h.SQLTools {
		e.Tools = append(e.Tools, sc.listings(connCfg[sc.Connector])...)
	}
	e.Resources, e.Prompts = resourcePromptListings(h, connTypes)
	e.Sources = sourceListings(h)
	for _, ts := range h.Toolsets {
		tl := cli.Toolset{Name: ts.Name, Paths: ts.Paths, Tools: ts.Tools, Sources: ts.Sources, Auth: authSummary(ts.Auth)}
		if r := ts.RateLimit; r != nil {
			tl.RateLimit = fmt.Sprintf("%d per %s", r.N, time.Duration(r.Period))
			if r.By != "" {
				tl.RateLimit += " by " + r.By
			}
		}
		e.Toolsets = append(e.Toolsets, tl)
	}
	return e, nil
}

// sourceListings reads each source's module from its JSON, without
// provisioning it, for what it says of its upstream's state.
func sourceListings(h Handler) []cli.Source {
	var out []cli.Source
	for _, sc := range h.Sources {
		var head struct {
			Type string `json:"source"`
		}
		_ = json.Unmarshal(sc.SourceRaw, &head)
		sl := cli.Source{Name: sc.Name, Type: head.Type}
		if info, err := caddy.GetModule("mcp.sources." + head.Type); err == nil {
			mod := info.New()
			if sharer, ok := mod.(pipeline.StateSharer); ok && json.Unmarshal(sc.SourceRaw, mod) == nil {
				sl.State = sharer.StateSharing(h.DefaultAuth != nil)
			}
		}
		out = append(out, sl)
	}
	return out
}

func annotationList(a *AnnotationsConfig) []string {
	var out []string
	for _, f := range []struct {
		name string
		v    *bool
	}{{"read_only", a.ReadOnly}, {"destructive", a.Destructive}, {"idempotent", a.Idempotent}, {"open_world", a.OpenWorld}} {
		if f.v != nil {
			out = append(out, fmt.Sprintf("%s=%t", f.name, *f.v))
		}
	}
	return out
}

// extraSettings returns the keys not in known (of a redacted config).
func extraSettings(keys map[string]json.RawMessage, known map[string]bool) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for k, v := range keys {
		if known[k] {
			continue
		}
		if out == nil {
			out = map[string]json.RawMessage{}
		}
		out[k] = v
	}
	return out
}

// cacheSummary is a tool's own cache line as the operator wrote it
// ("60s", "60s shared", "off"); "" when the tool has none (the endpoint's
// default_ttl, if any, applies to DB tools).
func cacheSummary(c *ToolCacheConfig) string {
	switch {
	case c == nil:
		return ""
	case c.Off:
		return "off"
	}
	var parts []string
	if c.TTL > 0 {
		parts = append(parts, time.Duration(c.TTL).String())
	}
	if c.Shared {
		parts = append(parts, "shared")
	}
	return strings.Join(parts, " ")
}

// authSummary is a tool's auth provider and policy ("keys (scope
// users:read)"); "" when the tool has none (default_auth, if any, applies).
func authSummary(a *AuthPolicyConfig) string {
	if a == nil {
		return ""
	}
	var policy []string
	if len(a.Scopes) > 0 {
		policy = append(policy, "scope "+strings.Join(a.Scopes, " "))
	}
	claims := make([]string, 0, len(a.Claims))
	for name, values := range a.Claims {
		claims = append(claims, "claim "+name+" "+strings.Join(values, " "))
	}
	sort.Strings(claims)
	policy = append(policy, claims...)
	if len(a.Subjects) > 0 {
		policy = append(policy, "subject "+strings.Join(a.Subjects, " "))
	}
	if len(policy) == 0 {
		return a.Use
	}
	return a.Use + " (" + strings.Join(policy, "; ") + ")"
}

// resourcePromptListings lists the declared resources and prompts.
func resourcePromptListings(h Handler, connTypes map[string]string) ([]cli.Resource, []cli.Prompt) {
	var res []cli.Resource
	for _, r := range h.Resources {
		mt := r.MimeType
		if mt == "" {
			mt = resources.DefaultMime
		}
		rl := cli.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MimeType: mt,
			Connector: r.Use, Type: connTypes[r.Use], Handler: r.Handler, Auth: authSummary(r.Auth)}
		if tc, err := r.toolConfig(); err == nil {
			rl.Inputs = listedInputs(tc.Inputs)
		}
		res = append(res, rl)
	}
	var prompts []cli.Prompt
	for _, p := range h.Prompts {
		prompts = append(prompts, cli.Prompt{Name: p.Name, Title: p.Title, Description: p.Description,
			Arguments: listedArguments(p.Arguments), Messages: len(p.Messages), Auth: authSummary(p.Auth)})
	}
	return res, prompts
}

// listedInputs are inputs as the listing shows them; nil for none.
func listedInputs(in []InputConfig) []cli.Input {
	if in == nil {
		return nil
	}
	out := make([]cli.Input, len(in))
	for i, x := range in {
		out[i] = cli.Input(x)
	}
	return out
}

// listedArguments are a prompt's arguments as the listing shows them.
func listedArguments(args []PromptArgumentConfig) []cli.PromptArgument {
	if args == nil {
		return nil
	}
	out := make([]cli.PromptArgument, len(args))
	for i, a := range args {
		out[i] = cli.PromptArgument(a)
	}
	return out
}

// The operator's `caddy mcp ...` commands list each mcp handler with
// endpointOf.
func init() { cli.Register(endpointOf, pinSources, Version) }
