// Package catalog is the tool catalog: a browser that opens the MCP URL (GET, Accept: text/html,
// no text/event-stream) gets a self-contained HTML page listing the tools the
// caller may call. MCP clients never ask for text/html, so the page cannot
// shadow the transport; `catalog off` turns it off and GET behaves as before.
// The page shows only what tools/list already publishes (names, descriptions,
// input schemas, hints) plus badges: never connectors, statements or secrets.

package catalog

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
)

// catalogHTML is the page's template.
//
//go:embed static/catalog.html
var catalogHTML string

// catalogCSS is the page's only style sheet, inlined; the CSP allows exactly
// this style block (by hash) and nothing else: no scripts, images or fonts.
//
//go:embed static/catalog.css
var catalogCSS string

// catalogJS is the page's only script, served from the endpoint's URL with
// ?catalog=script.js (the one path the mcp handler is sure to receive) and
// allowed by the CSP by that URL, checked by its integrity hash.
//
//go:embed static/catalog.js
var catalogJS string

var (
	catalogTemplate  = template.Must(template.New("catalog").Parse(catalogHTML))
	catalogStyleSrc  = hashSource(catalogCSS)
	catalogScriptSRI = strings.Trim(hashSource(catalogJS), "'")
)

// hashSource is a CSP hash source ('sha256-…') for text.
func hashSource(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// catalogCSP: the inline style by hash, the script by its URL, fetches to
// the endpoint only, Trusted Types required (the script never parses HTML),
// and nothing else: no images, fonts, frames or foreign form targets.
func catalogCSP(selfURL string) string {
	return "default-src 'none'; style-src " + catalogStyleSrc + "; script-src " + selfURL +
		"; connect-src " + selfURL + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'" +
		"; require-trusted-types-for 'script'; trusted-types 'none'"
}

// cspURL is the page's own URL without query, as a CSP source expression:
// scheme, host and path (';' and ',' would end the expression: escaped).
func cspURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	u := (&url.URL{Scheme: scheme, Host: r.Host, Path: r.URL.Path}).String()
	return strings.NewReplacer(";", "%3B", ",", "%2C").Replace(u)
}

// ScriptQuery is the query that asks the endpoint for the script.
const ScriptQuery = "catalog=script.js"

// Resource is a declared resource the page lists; Tool reads it (its
// inputs are a template's variables).
type Resource struct {
	URI, Name, Title, Description, MimeType string
	Template                                bool
	Tool                                    *pipeline.Tool
}

// Contents is what a request's caller may use: tools in declaration
// order, resources and prompts; and the tools a pinned source's pins hold
// back for the operator's review.
type Contents struct {
	Tools     []*pipeline.Tool
	Resources []Resource
	Prompts   []*pipeline.Prompt
	Held      []Held
}

// Held is a tool a pinned source brings whose definition is not the
// pinned one (or has no pin): the page says which, why, the pinned and
// current hashes and the short diff.
type Held struct {
	Source, Name, Reason string
	// Why is the sentence the gateway's warning says.
	Why             string
	Pinned, Current string
	Changes         []string
}

// Options configure a Catalog.
type Options struct {
	Server, Version string
	// Resource is the endpoint's canonical URL (default_auth's resource),
	// "" to use the URL the viewer reached.
	Resource string
	// Cred is where the endpoint's credentials go; nil without auth.
	Cred *Credential
	// Contents lists what the request's caller may use.
	Contents func(r *http.Request) Contents
	Logger   *zap.Logger
}

// Catalog serves the page and its script. A nil Catalog (`catalog off`)
// serves nothing.
type Catalog struct{ opts Options }

// New returns the catalog of one endpoint.
func New(opts Options) *Catalog { return &Catalog{opts: opts} }

// ServeScript answers GET <endpoint>?catalog=script.js with the
// page's script. It is the same for everyone and holds nothing secret, so
// it is served before the endpoint's auth: a browser sends no credentials
// when it loads a script.
func (c *Catalog) ServeScript(w http.ResponseWriter, r *http.Request) bool {
	if c == nil || r.Method != http.MethodGet || r.URL.RawQuery != ScriptQuery {
		return false
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/javascript; charset=utf-8")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Cache-Control", "no-cache") // revalidated: a new build brings a new script and hash
	hdr.Set("ETag", `"`+catalogScriptSRI+`"`)
	hdr.Set("Content-Length", strconv.Itoa(len(catalogJS)))
	if r.Header.Get("If-None-Match") == hdr.Get("ETag") {
		w.WriteHeader(http.StatusNotModified)
		return true
	}
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, catalogJS)
	return true
}

// Serve answers a browser's GET with the catalog page and reports
// whether it did; anything else is left to the MCP transport. locked: the
// endpoint requires credentials the browser did not send, so the page
// lists no tool (the viewer enters a credential to load them).
func (c *Catalog) Serve(w http.ResponseWriter, r *http.Request, locked bool) bool {
	if c == nil || r.Method != http.MethodGet || !wantsHTML(r.Header.Get("Accept")) {
		return false
	}
	var buf bytes.Buffer
	if err := catalogTemplate.Execute(&buf, c.page(r, locked)); err != nil {
		c.opts.Logger.Error("rendering the tool catalog", zap.Error(err))
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return true
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Content-Security-Policy", catalogCSP(cspURL(r)))
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	// The page depends on who asks (tools are filtered by identity) and on
	// Accept (the same URL is the MCP endpoint): never shared by caches.
	hdr.Set("Cache-Control", "private, no-store")
	hdr.Add("Vary", "Accept")
	hdr.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	return true
}

// wantsHTML: the Accept header names text/html (or XHTML) with a non-zero
// quality and does not name text/event-stream (an MCP client's GET).
func wantsHTML(accept string) bool {
	html := false
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "text/event-stream":
			return false
		case "text/html", "application/xhtml+xml":
			if q, err := strconv.ParseFloat(params["q"], 64); err != nil || q > 0 {
				html = true
			}
		}
	}
	return html
}

// badge is a short label on a tool card.
type badge struct {
	Label string // shown
	Class string // CSS modifier: auth, cache, safe, warn, info
	Title string // tooltip
}

// toolBadges are the badges of one tool: auth, cache and the MCP hints.
// New tool properties (a cache policy, say) add one line here.
func toolBadges(t *pipeline.Tool) []badge {
	var out []badge
	if t.Auth != nil {
		out = append(out, badge{"auth", "auth", "Calls need credentials accepted by the gateway"})
	}
	if len(t.FromIdentity) > 0 {
		// Names only: "auth.claims (claims_setting x)" is shown as
		// auth.claims, the page names no connector setting.
		names := make([]string, len(t.FromIdentity))
		for i, v := range t.FromIdentity {
			names[i], _, _ = strings.Cut(v, " (")
		}
		out = append(out, badge{"identity", "auth", "Uses the caller's verified identity, never an argument: " + strings.Join(names, ", ")})
	}
	if c := t.Cache; c != nil && c.TTL > 0 {
		scope := "per caller"
		if c.Shared || t.Auth == nil {
			scope = "shared by all callers"
		}
		out = append(out, badge{"cache " + c.TTL.String(), "cache", "Results are served from the gateway's cache for " + c.TTL.String() + ", " + scope})
	}
	a := t.Annotations
	if isTrue(a.ReadOnly) {
		out = append(out, badge{"read-only", "safe", "Does not modify its environment"})
	}
	if isTrue(a.Destructive) {
		out = append(out, badge{"destructive", "warn", "May perform destructive updates"})
	}
	if isTrue(a.Idempotent) {
		out = append(out, badge{"idempotent", "info", "Repeated calls with the same inputs have no further effect"})
	}
	if isTrue(a.OpenWorld) {
		out = append(out, badge{"open world", "info", "Interacts with external entities"})
	}
	return out
}

func isTrue(b *bool) bool { return b != nil && *b }

// catalogPage is the template's data.
type catalogPage struct {
	CSS       template.CSS
	Server    string
	Version   string
	Endpoint  string
	Clients   []clientConfig // the Connect section's snippets
	Cred      *Credential    // nil: the endpoint has no auth
	Locked    bool
	ScriptURL string
	ScriptSRI string
	Tools     []catalogTool
	// Resources and Prompts the caller may use.
	Resources []catalogResource
	Prompts   []catalogPrompt
	// Held are the tools held for review (Contents.Held).
	Held []Held
}

type catalogTool struct {
	Name        string
	Title       string
	Description string
	Badges      []badge
	Inputs      []catalogInput
	Schema      string // the published input schema, for the try-it form
}

type catalogInput struct {
	Name        string
	Type        string
	Required    bool
	Default     string // JSON text; "" when none
	Enum        []string
	Description string
}

// page is the page's data for r.
func (c *Catalog) page(r *http.Request, locked bool) catalogPage {
	endpoint := c.endpointURL(r)
	p := catalogPage{
		CSS:       template.CSS(catalogCSS),
		Server:    c.opts.Server,
		Version:   c.opts.Version,
		Endpoint:  endpoint,
		Clients:   clientConfigs(c.opts.Server, endpoint, c.opts.Cred),
		Cred:      c.opts.Cred,
		Locked:    locked,
		ScriptURL: r.URL.Path + "?" + ScriptQuery,
		ScriptSRI: catalogScriptSRI,
	}
	if locked {
		return p
	}
	contents := c.opts.Contents(r)
	for _, t := range contents.Tools {
		p.Tools = append(p.Tools, catalogTool{
			Name:        t.Name,
			Title:       t.Title,
			Description: t.Description,
			Badges:      toolBadges(t),
			Inputs:      catalogInputs(t),
			Schema:      string(t.Schema()),
		})
	}
	p.Resources, p.Prompts = resourcesAndPrompts(contents)
	p.Held = contents.Held
	return p
}

// endpointURL is the endpoint's absolute URL as the viewer reached it:
// https when the connection is TLS, the Host the gate admitted, the request
// path; the configured Resource when set (the canonical URL behind a proxy
// that rewrites scheme or host).
func (c *Catalog) endpointURL(r *http.Request) string {
	if c.opts.Resource != "" {
		return c.opts.Resource
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return (&url.URL{Scheme: scheme, Host: r.Host, Path: r.URL.Path}).String()
}

// catalogInputs lists a tool's inputs: from the declared inputs when there
// are any (types spelled as in the Caddyfile), else from its published
// JSON Schema (proxied tools).
func catalogInputs(t *pipeline.Tool) []catalogInput {
	if t.Inputs != nil && len(t.InputSchema) == 0 {
		var out []catalogInput
		for _, in := range t.Inputs.List() {
			ci := catalogInput{
				Name: in.Name, Type: in.Type.String(), Description: in.Description,
				Required: in.Required && !in.HasDefault, Enum: in.EnumText,
			}
			if in.HasDefault {
				ci.Default = literal(in.Default)
			}
			out = append(out, ci)
		}
		return out
	}
	return schemaInputs(t.Schema())
}

// schemaInputs reads the properties of a JSON Schema object, sorted by name.
func schemaInputs(schema json.RawMessage) []catalogInput {
	var s struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Format      string `json:"format"`
			Description string `json:"description"`
			Enum        []any  `json:"enum"`
			Default     any    `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	out := make([]catalogInput, 0, len(s.Properties))
	for name, p := range s.Properties {
		ci := catalogInput{Name: name, Type: fmt.Sprint(p.Type), Description: p.Description}
		if p.Type == nil {
			ci.Type = "any"
		}
		if p.Format != "" {
			ci.Type += " (" + p.Format + ")"
		}
		for _, r := range s.Required {
			ci.Required = ci.Required || r == name
		}
		for _, e := range p.Enum {
			ci.Enum = append(ci.Enum, fmt.Sprint(e))
		}
		if p.Default != nil {
			ci.Default = literal(p.Default)
		}
		out = append(out, ci)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// literal renders a default value as it would be sent: JSON, strings unquoted
// unless empty.
func literal(v any) string {
	switch x := v.(type) {
	case string:
		if x != "" {
			return x
		}
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
