package caddymodule

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/edgemcp/edgemcp/caddymodule/resources"
)

// The declared resources and prompts on the catalog page (catalog.go) and
// in `caddy mcp tools` (command_tools.go): what resources/list,
// resources/templates/list and prompts/list publish, never statements.

type catalogResource struct {
	URI         string
	Name        string
	Title       string
	Description string
	MimeType    string
	Auth        bool
	Inputs      []catalogInput // the template's variables
}

type catalogPrompt struct {
	Name        string
	Title       string
	Description string
	Auth        bool
	Inputs      []catalogInput // the arguments
}

// catalogResourcesAndPrompts are those the request's caller may use, by
// the checks of the lists (resourceAllowed, promptFilter).
func (h *Handler) catalogResourcesAndPrompts(r *http.Request) ([]catalogResource, []catalogPrompt) {
	var res []catalogResource
	for _, dr := range h.resources.All() {
		if !h.resources.Readable(r.Context(), dr) {
			continue
		}
		cr := catalogResource{URI: dr.URI, Name: dr.Name, Title: dr.Title, Description: dr.Description,
			MimeType: dr.Mime(), Auth: dr.Tool.Auth != nil}
		if dr.Template {
			cr.Inputs = catalogInputs(dr.Tool)
		}
		res = append(res, cr)
	}
	var prompts []catalogPrompt
	for _, p := range h.prompts.All() {
		if !h.prompts.Readable(r.Context(), p) {
			continue
		}
		cp := catalogPrompt{Name: p.Name, Title: p.Title, Description: p.Description, Auth: p.Auth != nil}
		for _, a := range p.Arguments {
			cp.Inputs = append(cp.Inputs, catalogInput{Name: a.Name, Type: "string", Required: a.Required, Enum: a.Enum, Description: a.Description})
		}
		prompts = append(prompts, cp)
	}
	return res, prompts
}

// resourceListing is a declared resource in `caddy mcp tools`.
type resourceListing struct {
	URI         string        `json:"uri"`
	Name        string        `json:"name"`
	Title       string        `json:"title,omitempty"`
	Description string        `json:"description,omitempty"`
	MimeType    string        `json:"mime_type"`
	Connector   string        `json:"connector,omitempty"`
	Type        string        `json:"connector_type,omitempty"`
	Handler     string        `json:"handler,omitempty"`
	Inputs      []InputConfig `json:"inputs,omitempty"`
	Auth        string        `json:"auth,omitempty"`
}

// promptListing is a declared prompt in `caddy mcp tools`.
type promptListing struct {
	Name        string                 `json:"name"`
	Title       string                 `json:"title,omitempty"`
	Description string                 `json:"description,omitempty"`
	Arguments   []PromptArgumentConfig `json:"arguments,omitempty"`
	Messages    int                    `json:"messages"`
	Auth        string                 `json:"auth,omitempty"`
}

func resourcePromptListings(h Handler, connTypes map[string]string) ([]resourceListing, []promptListing) {
	var res []resourceListing
	for _, r := range h.Resources {
		mt := r.MimeType
		if mt == "" {
			mt = resources.DefaultMime
		}
		rl := resourceListing{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MimeType: mt,
			Connector: r.Use, Type: connTypes[r.Use], Handler: r.Handler, Auth: authSummary(r.Auth)}
		if tc, err := r.toolConfig(); err == nil {
			rl.Inputs = tc.Inputs
		}
		res = append(res, rl)
	}
	var prompts []promptListing
	for _, p := range h.Prompts {
		prompts = append(prompts, promptListing{Name: p.Name, Title: p.Title, Description: p.Description,
			Arguments: p.Arguments, Messages: len(p.Messages), Auth: authSummary(p.Auth)})
	}
	return res, prompts
}

func writeResourcesAndPrompts(out io.Writer, e endpointListing) {
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
