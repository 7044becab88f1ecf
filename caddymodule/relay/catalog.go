package relay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Catalog is one version of what the sources bring, as mcp-go entries.
type Catalog struct {
	resources []server.ServerResource
	templates []server.ServerResourceTemplate
	prompts   []server.ServerPrompt
	// Where completion/complete goes: a prompt's source and original name,
	// a template's source; where resources/subscribe goes: a resource's
	// source.
	promptOrigin   map[string]upstreamPrompt
	templateOrigin map[string]pipeline.CatalogSource
	resourceOrigin map[string]pipeline.CatalogSource
	// ResourceText, TemplateText and PromptText are the entries as the
	// sources listed them, by URI, URI template and (the gateway's) prompt
	// name, written in place of mcp-go's.
	ResourceText map[string]json.RawMessage
	TemplateText map[string]json.RawMessage
	PromptText   map[string]json.RawMessage
	// instructions are the servers' own, each under a heading with its
	// source's name (Relay.Hooks).
	instructions string
	// sources are the catalog sources in order, and schemes the URI
	// schemes of what each lists (unlistedOrigin).
	sources []pipeline.CatalogSource
	schemes map[pipeline.CatalogSource]map[string]bool
}

type upstreamPrompt struct {
	src      pipeline.CatalogSource
	original string
}

// build reads every catalog source as it is now.
func (r *Relay) build() (*Catalog, error) {
	out := &Catalog{promptOrigin: map[string]upstreamPrompt{}, templateOrigin: map[string]pipeline.CatalogSource{},
		resourceOrigin: map[string]pipeline.CatalogSource{}, ResourceText: map[string]json.RawMessage{},
		TemplateText: map[string]json.RawMessage{}, PromptText: map[string]json.RawMessage{},
		schemes: map[pipeline.CatalogSource]map[string]bool{}}
	owner := map[string]string{} // URI or template → its origin
	for _, res := range r.Resources.All() {
		owner[res.URI] = "a declared resource"
	}
	prompts := map[string]string{}
	for _, p := range r.Prompts.All() {
		prompts[p.Name] = "a declared prompt"
	}
	claim := func(uri, origin string) (bool, error) {
		o, taken := owner[uri]
		switch {
		case !taken:
			owner[uri] = origin
			return true, nil
		case o == "a declared resource":
			return false, fmt.Errorf("%s: resource %q is also %s", origin, uri, o)
		}
		r.Logger.Warn("a source's resource is left out: an earlier source has its URI",
			zap.String("uri", uri), zap.String("left_out", origin), zap.String("served_by", o))
		return false, nil
	}
	var instructions []string
	for _, s := range r.Sources {
		cs := s.Src
		cat := cs.Catalog()
		origin := fmt.Sprintf("source %q", s.Name)
		if strings.TrimSpace(cat.Instructions) != "" {
			instructions = append(instructions, "## "+s.Name+"\n\n"+cat.Instructions)
		}
		out.sources = append(out.sources, cs)
		schemes := map[string]bool{}
		out.schemes[cs] = schemes
		for _, raw := range cat.Resources {
			var res mcp.Resource
			if err := json.Unmarshal(raw, &res); err != nil || res.URI == "" {
				return nil, fmt.Errorf("%s: a resource the server listed is not valid: %s", origin, truncate(raw))
			}
			schemes[uriScheme(res.URI)] = true
			if ok, err := claim(res.URI, origin); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
			out.resourceOrigin[res.URI] = cs
			out.ResourceText[res.URI] = compactJSON(raw)
			out.resources = append(out.resources, server.ServerResource{Resource: res, Handler: r.forwardRead(cs)})
		}
		for _, raw := range cat.Templates {
			var t mcp.ResourceTemplate
			if err := json.Unmarshal(raw, &t); err != nil || t.URITemplate == nil {
				return nil, fmt.Errorf("%s: a resource template the server listed is not valid: %s", origin, truncate(raw))
			}
			schemes[uriScheme(t.URITemplate.Raw())] = true
			if ok, err := claim(t.URITemplate.Raw(), origin); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
			out.templateOrigin[t.URITemplate.Raw()] = cs
			out.TemplateText[t.URITemplate.Raw()] = compactJSON(raw)
			out.templates = append(out.templates, server.ServerResourceTemplate{Template: t, Handler: server.ResourceTemplateHandlerFunc(r.forwardRead(cs))})
		}
		for _, raw := range cat.Prompts {
			var p mcp.Prompt
			if err := json.Unmarshal(raw, &p); err != nil || p.Name == "" {
				return nil, fmt.Errorf("%s: a prompt the server listed is not valid: %s", origin, truncate(raw))
			}
			original := p.Name
			p.Name = pipeline.ToolName(s.Namespace, original) // prefix applies as to tools
			if o, taken := prompts[p.Name]; taken {
				return nil, fmt.Errorf("%s: its prompt %q is named %q, the name of %s", origin, original, p.Name, o)
			}
			prompts[p.Name] = fmt.Sprintf("prompt %q of %s", original, origin)
			out.promptOrigin[p.Name] = upstreamPrompt{src: cs, original: original}
			name, _ := json.Marshal(p.Name)
			if text, err := r.WithMember(compactJSON(raw), "name", name); err == nil {
				out.PromptText[p.Name] = text
			}
			out.prompts = append(out.prompts, server.ServerPrompt{Prompt: p, Handler: r.forwardGet(cs, original)})
		}
	}
	out.instructions = strings.Join(instructions, "\n\n")
	return out, nil
}

// compactJSON is raw without insignificant white space: written into an
// SSE event, a line break would end the event's data.
func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func truncate(raw json.RawMessage) string {
	if len(raw) > 120 {
		return string(raw[:120]) + "…"
	}
	return string(raw)
}
