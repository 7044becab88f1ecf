package upstreams

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
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
	// source's name (Set.Hooks).
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
func (r *Set) build() (*Catalog, error) {
	b := &builder{r: r, owner: map[string]string{}, prompts: map[string]string{}, out: &Catalog{
		promptOrigin: map[string]upstreamPrompt{}, templateOrigin: map[string]pipeline.CatalogSource{},
		resourceOrigin: map[string]pipeline.CatalogSource{}, ResourceText: map[string]json.RawMessage{},
		TemplateText: map[string]json.RawMessage{}, PromptText: map[string]json.RawMessage{},
		schemes: map[pipeline.CatalogSource]map[string]bool{}}}
	for _, res := range r.Resources.All() {
		b.owner[res.URI] = declaredResource
	}
	for _, p := range r.Prompts.All() {
		b.prompts[p.Name] = "a declared prompt"
	}
	var instructions []string
	for _, s := range r.Sources {
		cat := s.Src.Catalog()
		if strings.TrimSpace(cat.Instructions) != "" {
			instructions = append(instructions, "## "+s.Name+"\n\n"+cat.Instructions)
		}
		if err := b.add(s, cat); err != nil {
			return nil, err
		}
	}
	b.out.instructions = strings.Join(instructions, "\n\n")
	return b.out, nil
}

const declaredResource = "a declared resource"

// builder is one build of a Catalog: what each URI, template and prompt
// name is already taken by.
type builder struct {
	r       *Set
	out     *Catalog
	owner   map[string]string // URI or template → its origin
	prompts map[string]string // prompt name → its origin
}

// add adds one source's resources, templates and prompts.
func (b *builder) add(s Source, cat pipeline.SourceCatalog) error {
	cs, out := s.Src, b.out
	origin := fmt.Sprintf("source %q", s.Name)
	out.sources = append(out.sources, cs)
	schemes := map[string]bool{}
	out.schemes[cs] = schemes
	for _, raw := range cat.Resources {
		var res mcp.Resource
		if err := json.Unmarshal(raw, &res); err != nil || res.URI == "" {
			return fmt.Errorf("%s: a resource the server listed is not valid: %s", origin, truncate(raw))
		}
		schemes[uriScheme(res.URI)] = true
		if ok, err := b.claim(res.URI, origin); !ok {
			if err != nil {
				return err
			}
			continue
		}
		out.resourceOrigin[res.URI] = cs
		out.ResourceText[res.URI] = compactJSON(raw)
		out.resources = append(out.resources, server.ServerResource{Resource: res, Handler: b.r.forwardRead(cs)})
	}
	for _, raw := range cat.Templates {
		var t mcp.ResourceTemplate
		if err := json.Unmarshal(raw, &t); err != nil || t.URITemplate == nil {
			return fmt.Errorf("%s: a resource template the server listed is not valid: %s", origin, truncate(raw))
		}
		uri := t.URITemplate.Raw()
		schemes[uriScheme(uri)] = true
		if ok, err := b.claim(uri, origin); !ok {
			if err != nil {
				return err
			}
			continue
		}
		out.templateOrigin[uri] = cs
		out.TemplateText[uri] = compactJSON(raw)
		out.templates = append(out.templates, server.ServerResourceTemplate{Template: t, Handler: server.ResourceTemplateHandlerFunc(b.r.forwardRead(cs))})
	}
	for _, raw := range cat.Prompts {
		if err := b.addPrompt(s, origin, raw); err != nil {
			return err
		}
	}
	return nil
}

// claim takes uri for origin: false, with an error, when a declared
// resource has it; false, with a warning, when an earlier source has it.
func (b *builder) claim(uri, origin string) (bool, error) {
	o, taken := b.owner[uri]
	switch {
	case !taken:
		b.owner[uri] = origin
		return true, nil
	case o == declaredResource:
		return false, fmt.Errorf("%s: resource %q is also %s", origin, uri, o)
	}
	b.r.Logger.Warn("a source's resource is left out: an earlier source has its URI",
		zap.String("uri", uri), zap.String("left_out", origin), zap.String("served_by", o))
	return false, nil
}

// addPrompt adds a source's prompt, named into the source's namespace.
func (b *builder) addPrompt(s Source, origin string, raw json.RawMessage) error {
	var p mcp.Prompt
	if err := json.Unmarshal(raw, &p); err != nil || p.Name == "" {
		return fmt.Errorf("%s: a prompt the server listed is not valid: %s", origin, truncate(raw))
	}
	original := p.Name
	p.Name = pipeline.ToolName(s.Namespace, original) // prefix applies as to tools
	if o, taken := b.prompts[p.Name]; taken {
		return fmt.Errorf("%s: its prompt %q is named %q, the name of %s", origin, original, p.Name, o)
	}
	b.prompts[p.Name] = fmt.Sprintf("prompt %q of %s", original, origin)
	b.out.promptOrigin[p.Name] = upstreamPrompt{src: s.Src, original: original}
	name, _ := json.Marshal(p.Name)
	if text, err := jsonrpc.WithMember(compactJSON(raw), "name", name); err == nil {
		b.out.PromptText[p.Name] = text
	}
	b.out.prompts = append(b.out.prompts, server.ServerPrompt{Prompt: p, Handler: b.r.forwardGet(s.Src, original)})
	return nil
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
