package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/edgemcp/edgemcp/pipeline"
)

// `caddy mcp tools` reads a config the way `caddy adapt` does and lists the
// tools of every mcp handler in it. It works on the JSON model only: nothing
// is provisioned, so no database is contacted and no environment variable
// needs to be set. Settings added by other parts of the module (cache, auth,
// scripts, sources) are shown generically from their JSON. The Lister
// redacts each handler's config before it reads anything from it
// (redact.JSON): no secret reaches the text or the JSON output.

func toolsCommand(list Lister) *cobra.Command {
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
		endpoints, err := listEndpoints(cfg, list)
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

// defaultErrorMode is the handler's error_mode when the config sets none.
const defaultErrorMode = "jsonrpc"

// listEndpoints finds every mcp handler in an adapted JSON config, with the
// host and path matchers of the routes that lead to it.
func listEndpoints(cfg []byte, list Lister) ([]Endpoint, error) {
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
	var out []Endpoint
	for _, name := range names {
		srv := root.Apps.HTTP.Servers[name]
		w := routeWalker{server: name, listen: srv.Listen, list: list}
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
	list   Lister
	found  []Endpoint
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
				e, err := w.list(handle)
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

// writeEndpoints prints the listing for people.
func writeEndpoints(out io.Writer, endpoints []Endpoint) {
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
			mode = defaultErrorMode
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
		for _, ts := range e.Toolsets {
			writeToolset(out, ts)
		}
	}
}

// writeToolset prints a toolset on one line: its paths, then what it
// selects and what it has of its own.
func writeToolset(out io.Writer, ts Toolset) {
	var parts []string
	if len(ts.Sources) > 0 {
		parts = append(parts, "sources "+strings.Join(ts.Sources, " "))
	}
	if len(ts.Tools) > 0 {
		parts = append(parts, "tools "+strings.Join(ts.Tools, " "))
	}
	if ts.Auth != "" {
		parts = append(parts, "auth "+ts.Auth)
	}
	if ts.RateLimit != "" {
		parts = append(parts, "rate_limit "+ts.RateLimit)
	}
	fmt.Fprintf(out, "  toolset %s at %s: %s\n", ts.Name, strings.Join(ts.Paths, " "), strings.Join(parts, "; "))
}

func connectorFlags(c Connector) string {
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

func writeTool(out io.Writer, t Tool) {
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

// writeResourcesAndPrompts prints an endpoint's declared resources and
// prompts.
func writeResourcesAndPrompts(out io.Writer, e Endpoint) {
	if len(e.Resources) > 0 {
		fmt.Fprintf(out, "\n  %d resource%s\n", len(e.Resources), plural(len(e.Resources)))
	}
	for _, r := range e.Resources {
		fmt.Fprintf(out, "\n  %s (%s, %s)\n", r.URI, r.Name, r.MimeType)
		if r.Description != "" {
			fmt.Fprintf(out, "    %s\n", r.Description)
		}
		switch {
		case r.Connector != "":
			fmt.Fprintf(out, "    connector: %s (%s)\n", r.Connector, quoteIfEmpty(r.Type))
		case r.Handler != "":
			fmt.Fprintf(out, "    handler: %s\n", r.Handler)
		}
		if r.Auth != "" {
			fmt.Fprintf(out, "    auth: %s\n", r.Auth)
		}
		for _, in := range r.Inputs {
			line := fmt.Sprintf("    variable %s %s", in.Name, in.Type)
			if len(in.Enum) > 0 {
				line += " enum " + strings.Join(in.Enum, "|")
			}
			fmt.Fprintln(out, line)
		}
	}
	if len(e.Prompts) > 0 {
		fmt.Fprintf(out, "\n  %d prompt%s\n", len(e.Prompts), plural(len(e.Prompts)))
	}
	for _, p := range e.Prompts {
		fmt.Fprintf(out, "\n  %s (%d message%s)\n", p.Name, p.Messages, plural(p.Messages))
		if p.Description != "" {
			fmt.Fprintf(out, "    %s\n", p.Description)
		}
		if p.Auth != "" {
			fmt.Fprintf(out, "    auth: %s\n", p.Auth)
		}
		for _, a := range p.Arguments {
			line := "    argument " + a.Name
			if a.Required {
				line += " required"
			}
			if len(a.Enum) > 0 {
				line += " enum " + strings.Join(a.Enum, "|")
			}
			fmt.Fprintln(out, line)
		}
	}
}
