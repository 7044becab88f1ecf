package caddymodule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/edgemcp/edgemcp/caddymodule/redact"
	"github.com/edgemcp/edgemcp/pipeline"
)

// `caddy mcp tools` reads a config the way `caddy adapt` does and lists the
// tools of every mcp handler in it. It works on the JSON model only: nothing
// is provisioned, so no database is contacted and no environment variable
// needs to be set. Settings added by other parts of the module (cache, auth,
// scripts, sources) are shown generically from their JSON. The config is
// redacted before anything is read from it (redact.JSON): no secret
// reaches the text or the JSON output.

func toolsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools --config <file> [--adapter <name>] [--json]",
		Short: "Lists the tools of a config without starting a server",
		Args:  cobra.NoArgs,
	}
	cmd.Flags().StringP("config", "c", "", "Configuration file (required)")
	cmd.Flags().StringP("adapter", "a", "", "Name of config adapter to apply (e.g. caddyfile)")
	cmd.Flags().Bool("json", false, "Print the listing as JSON")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		file, _ := cmd.Flags().GetString("config")
		adapter, _ := cmd.Flags().GetString("adapter")
		asJSON, _ := cmd.Flags().GetBool("json")
		if file == "" {
			return fmt.Errorf("--config is required")
		}
		cfg, _, _, err := caddycmd.LoadConfig(file, adapter)
		if err != nil {
			return failed(cmd, err)
		}
		endpoints, err := listEndpoints(cfg)
		if err != nil {
			return failed(cmd, fmt.Errorf("%s: %v", file, err))
		}
		if len(endpoints) == 0 {
			return failed(cmd, fmt.Errorf("%s: no mcp handler in this config", file))
		}
		if asJSON {
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(endpoints)
		}
		writeEndpoints(cmd.OutOrStdout(), endpoints)
		return nil
	}
	return cmd
}

// endpointListing is one mcp handler of a config.
type endpointListing struct {
	Server     string                     `json:"server"`
	Listen     []string                   `json:"listen,omitempty"`
	Hosts      []string                   `json:"hosts,omitempty"`
	Paths      []string                   `json:"paths,omitempty"`
	Name       string                     `json:"name"`
	Version    string                     `json:"version,omitempty"`
	ErrorMode  string                     `json:"error_mode,omitempty"`
	Catalog    bool                       `json:"catalog"`
	Connectors []connectorListing         `json:"connectors,omitempty"`
	Settings   map[string]json.RawMessage `json:"settings,omitempty"`
	Tools      []toolListing              `json:"tools"`
	// Resources and Prompts declared (catalog_resources.go).
	Resources []resourceListing `json:"resources,omitempty"`
	Prompts   []promptListing   `json:"prompts,omitempty"`
	// Sources, with who shares their upstream's state.
	Sources []sourceListing `json:"sources,omitempty"`
}

// sourceListing is a source by name and type; State says who shares the
// upstream's state, for a source that keeps any (pipeline.StateSharer).
type sourceListing struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	State string `json:"state,omitempty"`
}

// connectorListing is a connector without its DSN.
type connectorListing struct {
	Name             string `json:"name"`
	Type             string `json:"type"`
	ReadOnly         bool   `json:"read_only,omitempty"`
	MaxConns         int    `json:"max_conns,omitempty"`
	MaxRows          int    `json:"max_rows,omitempty"`
	MaxResultSize    int64  `json:"max_result_size,omitempty"`
	StatementTimeout string `json:"statement_timeout,omitempty"`
}

type toolListing struct {
	Name        string        `json:"name"`
	Title       string        `json:"title,omitempty"`
	Description string        `json:"description"`
	Connector   string        `json:"connector,omitempty"`
	Type        string        `json:"connector_type,omitempty"`
	Inputs      []InputConfig `json:"inputs"`
	Annotations []string      `json:"annotations,omitempty"`
	Cache       string        `json:"cache,omitempty"`
	Auth        string        `json:"auth,omitempty"`
	// FromIdentity is what the statement takes from the caller's verified
	// identity rather than from the arguments (README, Statement templates).
	FromIdentity []string `json:"from_identity,omitempty"`
	// Approval: a person confirms every call in the client (README,
	// Approvals), by the tool's own policy or its connector's.
	Approval bool                       `json:"approval,omitempty"`
	Settings map[string]json.RawMessage `json:"settings,omitempty"`
}

// Keys of the handler and tool JSON that the listing shows in its own
// fields (or deliberately not at all); every other key is a setting.
var (
	knownHandlerKeys = map[string]bool{"handler": true, "name": true, "version": true, "error_mode": true,
		"connectors": true, "tools": true, "catalog_off": true, "max_body_size": true,
		"session_idle_timeout": true, "allowed_origins": true, "resources": true, "prompts": true}
	knownToolKeys = map[string]bool{"name": true, "title": true, "description": true, "use": true,
		"statement": true, "inputs": true, "annotations": true, "cache": true, "auth": true, "approval": true}
)

// listEndpoints finds every mcp handler in an adapted JSON config, with the
// host and path matchers of the routes that lead to it.
func listEndpoints(cfg []byte) ([]endpointListing, error) {
	var root struct {
		Apps struct {
			HTTP struct {
				Servers map[string]struct {
					Listen []string          `json:"listen"`
					Routes []json.RawMessage `json:"routes"`
				} `json:"servers"`
			} `json:"http"`
		} `json:"apps"`
	}
	if err := json.Unmarshal(cfg, &root); err != nil {
		return nil, fmt.Errorf("reading the config: %v", err)
	}
	names := make([]string, 0, len(root.Apps.HTTP.Servers))
	for name := range root.Apps.HTTP.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []endpointListing
	for _, name := range names {
		srv := root.Apps.HTTP.Servers[name]
		w := routeWalker{server: name, listen: srv.Listen}
		if err := w.routes(srv.Routes, nil, nil); err != nil {
			return nil, err
		}
		out = append(out, w.found...)
	}
	return out, nil
}

type routeWalker struct {
	server string
	listen []string
	found  []endpointListing
}

func (w *routeWalker) routes(routes []json.RawMessage, hosts, paths []string) error {
	for _, raw := range routes {
		var route struct {
			Match []struct {
				Host []string `json:"host"`
				Path []string `json:"path"`
			} `json:"match"`
			Handle []json.RawMessage `json:"handle"`
		}
		if err := json.Unmarshal(raw, &route); err != nil {
			return err
		}
		h, p := hosts, paths
		for _, m := range route.Match {
			h = append(h[:len(h):len(h)], m.Host...)
			p = append(p[:len(p):len(p)], m.Path...)
		}
		for _, handle := range route.Handle {
			var probe struct {
				Handler string            `json:"handler"`
				Routes  []json.RawMessage `json:"routes"`
			}
			if err := json.Unmarshal(handle, &probe); err != nil {
				return err
			}
			switch probe.Handler {
			case "subroute":
				if err := w.routes(probe.Routes, h, p); err != nil {
					return err
				}
			case "mcp":
				e, err := endpointOf(handle)
				if err != nil {
					return err
				}
				e.Server, e.Listen, e.Hosts, e.Paths = w.server, w.listen, h, p
				w.found = append(w.found, e)
			}
		}
	}
	return nil
}

// endpointOf lists one mcp handler from its JSON, redacted first: every
// part of the listing comes from the redacted config.
func endpointOf(raw json.RawMessage) (endpointListing, error) {
	raw, _ = redact.JSON(raw)
	var h Handler
	if err := json.Unmarshal(raw, &h); err != nil {
		return endpointListing{}, fmt.Errorf("mcp handler: %v", err)
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(raw, &keys)
	e := endpointListing{Name: h.ServerName, Version: h.ServerVersion, ErrorMode: h.ErrorMode,
		Catalog: !h.CatalogOff, Settings: extraSettings(keys, knownHandlerKeys)}
	if e.Name == "" {
		e.Name = defaultServerName
	}
	connTypes := map[string]string{}
	connCfg := map[string]ConnectorConfig{}
	for _, c := range h.Connectors {
		connCfg[c.Name] = c
		cl := connectorListing{Name: c.Name, Type: c.Type, ReadOnly: c.ReadOnly, MaxConns: c.MaxConns, MaxRows: c.MaxRows, MaxResultSize: c.MaxResultSize}
		if c.StatementTimeout > 0 {
			cl.StatementTimeout = time.Duration(c.StatementTimeout).String()
		}
		e.Connectors = append(e.Connectors, cl)
		connTypes[c.Name] = c.Type
	}
	var rawTools []map[string]json.RawMessage
	_ = json.Unmarshal(keys["tools"], &rawTools)
	e.Tools = []toolListing{}
	for i, tc := range h.Tools {
		tl := toolListing{Name: tc.Name, Title: tc.Title, Description: tc.Description,
			Connector: tc.Use, Type: connTypes[tc.Use], Inputs: tc.Inputs}
		if tl.Inputs == nil {
			tl.Inputs = []InputConfig{}
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
	e.Resources, e.Prompts = resourcePromptListings(h, connTypes)
	e.Sources = sourceListings(h)
	return e, nil
}

// sourceListings reads each source's module from its JSON, without
// provisioning it, for what it says of its upstream's state.
func sourceListings(h Handler) []sourceListing {
	var out []sourceListing
	for _, sc := range h.Sources {
		var head struct {
			Type string `json:"source"`
		}
		_ = json.Unmarshal(sc.SourceRaw, &head)
		sl := sourceListing{Name: sc.Name, Type: head.Type}
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

// writeEndpoints prints the listing for people.
func writeEndpoints(out io.Writer, endpoints []endpointListing) {
	for i, e := range endpoints {
		if i > 0 {
			fmt.Fprintln(out)
		}
		where := []string{"server " + e.Server}
		if len(e.Listen) > 0 {
			where = append(where, "listen "+strings.Join(e.Listen, " "))
		}
		if len(e.Hosts) > 0 {
			where = append(where, "host "+strings.Join(e.Hosts, " "))
		}
		if len(e.Paths) > 0 {
			where = append(where, "path "+strings.Join(e.Paths, " "))
		}
		title := e.Name
		if e.Version != "" {
			title += " " + e.Version
		}
		fmt.Fprintf(out, "MCP endpoint %s (%s)\n", title, strings.Join(where, ", "))
		catalog := "on"
		if !e.Catalog {
			catalog = "off"
		}
		mode := e.ErrorMode
		if mode == "" {
			mode = errorModeJSONRPC
		}
		fmt.Fprintf(out, "  error_mode %s, catalog %s\n", mode, catalog)
		for _, c := range e.Connectors {
			fmt.Fprintf(out, "  connector %s %s%s\n", c.Name, c.Type, connectorFlags(c))
		}
		writeSettings(out, "  ", e.Settings)
		fmt.Fprintf(out, "  %d tool%s\n", len(e.Tools), plural(len(e.Tools)))
		for _, t := range e.Tools {
			writeTool(out, t)
		}
		writeResourcesAndPrompts(out, e)
		for _, s := range e.Sources {
			state := ""
			if s.State != "" {
				state = ": state " + s.State
			}
			fmt.Fprintf(out, "  source %s %s%s\n", s.Name, s.Type, state)
		}
	}
}

func connectorFlags(c connectorListing) string {
	var f []string
	if c.ReadOnly {
		f = append(f, "read_only")
	}
	if c.MaxConns > 0 {
		f = append(f, fmt.Sprintf("max_conns %d", c.MaxConns))
	}
	if c.MaxRows > 0 {
		f = append(f, fmt.Sprintf("max_rows %d", c.MaxRows))
	}
	if c.MaxResultSize > 0 {
		f = append(f, "max_result_size "+pipeline.SizeText(c.MaxResultSize))
	}
	if c.StatementTimeout != "" {
		f = append(f, "statement_timeout "+c.StatementTimeout)
	}
	if len(f) == 0 {
		return ""
	}
	return " (" + strings.Join(f, ", ") + ")"
}

func writeTool(out io.Writer, t toolListing) {
	fmt.Fprintf(out, "\n  %s", t.Name)
	if t.Title != "" {
		fmt.Fprintf(out, " — %s", t.Title)
	}
	fmt.Fprintf(out, "\n    %s\n", t.Description)
	if t.Connector != "" {
		typ := t.Type
		if typ == "" {
			typ = "undeclared"
		}
		fmt.Fprintf(out, "    connector: %s (%s)\n", t.Connector, typ)
	}
	if len(t.Annotations) > 0 {
		fmt.Fprintf(out, "    annotations: %s\n", strings.Join(t.Annotations, " "))
	}
	if t.Cache != "" {
		fmt.Fprintf(out, "    cache: %s\n", t.Cache)
	}
	if t.Auth != "" {
		fmt.Fprintf(out, "    auth: %s\n", t.Auth)
	}
	if len(t.FromIdentity) > 0 {
		fmt.Fprintf(out, "    from identity: %s\n", strings.Join(t.FromIdentity, ", "))
	}
	if t.Approval {
		fmt.Fprintln(out, "    approval: asked in the client before every call")
	}
	writeSettings(out, "    ", t.Settings)
	if len(t.Inputs) == 0 {
		fmt.Fprintln(out, "    inputs: none")
		return
	}
	fmt.Fprintln(out, "    inputs:")
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	for _, in := range t.Inputs {
		var attrs []string
		switch {
		case in.Required:
			attrs = append(attrs, "required")
		case in.Default != nil:
			attrs = append(attrs, "default "+quoteIfEmpty(*in.Default))
		default:
			attrs = append(attrs, "optional")
		}
		if len(in.Enum) > 0 {
			attrs = append(attrs, "enum "+strings.Join(in.Enum, "|"))
		}
		fmt.Fprintf(tw, "      %s\t%s\t%s\t%s\n", in.Name, in.Type, strings.Join(attrs, ", "), in.Description)
	}
	_ = tw.Flush()
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		// An input without a description leaves the padding of its last cell.
		fmt.Fprint(out, strings.TrimRight(line, " "))
	}
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

// writeSettings prints extra settings (cache, auth, handler, ...) sorted by
// key, one per line as compact JSON.
func writeSettings(out io.Writer, indent string, s map[string]json.RawMessage) {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(out, "%s%s: %s\n", indent, k, s[k])
	}
}

func quoteIfEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
