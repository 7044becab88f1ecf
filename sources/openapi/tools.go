package openapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// Config is how a document's operations become tools.
type Config struct {
	Options
	// BaseURL overrides the document's servers[0].
	BaseURL string
	// Credentials are added to every request, in order.
	Credentials []upstream.Credential
	// Client sends the requests; nil uses upstream.NewClient(upstream.Transport).
	Client          *http.Client
	Retry           upstream.Retry
	Breaker         *upstream.Breaker
	MaxResponseSize int64
	Timeout         time.Duration
	// CacheTTL caches GET and HEAD results this long (0: not cached).
	// The entries are shared by every caller unless a credential depends
	// on the caller (passthrough): then each identity has its own.
	CacheTTL time.Duration
	// CacheRespect honours the upstream's Cache-Control.
	CacheRespect bool
	// CacheOperations are globs (as Include's) over further operations
	// whose results are cached, whatever their method.
	CacheOperations []string
	// Set fixes parameters by name (`set <param> <value>`): a literal, or
	// {{ auth.subject }} / {{ auth.claims.NAME }} of the verified caller.
	Set map[string]string
	// OutputSchemaStrict publishes each operation's response schema as the
	// tool's outputSchema, and turns an answer outside it into an isError
	// result (clients such as the TypeScript SDK refuse such an answer).
	// Off, no outputSchema is published and every answer passes.
	OutputSchemaStrict bool
}

// Report says what Tools left out to serve the rest.
type Report struct {
	// Skipped are the operations left out, with why.
	Skipped []Skipped
	// Patterns are the schema patterns left out of the published schemas,
	// each once: they have no form that clients compile (ecmaPattern).
	Patterns []string
}

// Tools returns one tool per operation of doc that cfg selects, each with
// its executor, annotations, input and output schemas and aliases, and
// what it left out.
func Tools(doc *Document, cfg Config) ([]*pipeline.Tool, Report, error) {
	var report Report
	base, err := baseURL(doc, cfg.BaseURL)
	if err != nil {
		return nil, report, err
	}
	for _, c := range cfg.Credentials {
		cfg.Reserved.Add(c.Reserves())
	}
	if len(cfg.Set) > 0 {
		cfg.Fixed = make(map[string]upstream.Fixed, len(cfg.Set))
		for name, text := range cfg.Set {
			f, err := upstream.ParseFixed(text)
			if err != nil {
				return nil, report, fmt.Errorf("set %s: %v", name, err)
			}
			cfg.Fixed[name] = f
		}
	}
	ops, skipped, err := Operations(doc, cfg.Options)
	if err != nil {
		return nil, report, err
	}
	report.Skipped = skipped
	perCaller := false
	for _, c := range cfg.Credentials {
		if _, ok := c.(upstream.CallerDependent); ok {
			perCaller = true
		}
	}
	client := cfg.Client
	if client == nil {
		client = upstream.NewClient(upstream.Transport)
	}
	used := map[string]bool{} // by canonicalName, as a set takes a parameter
	for _, o := range ops {
		for _, p := range o.Params {
			if p.Fixed != nil {
				used[string(canonicalName(nil, p.Name, false))] = true
			}
		}
	}
	for name := range cfg.Set {
		if !used[string(canonicalName(nil, name, false))] {
			return nil, report, fmt.Errorf("set %s: no selected operation has a parameter of that name", name)
		}
	}
	var dropped []string
	tools := make([]*pipeline.Tool, 0, len(ops))
	for _, o := range ops {
		in, err := json.Marshal(o.inputSchema(&dropped))
		if err != nil {
			return nil, report, fmt.Errorf("%s: input schema: %v", o.Origin(), err)
		}
		x := &Executor{Op: o, Base: base, Client: client, Credentials: cfg.Credentials,
			Retry: cfg.Retry, Breaker: cfg.Breaker, MaxResponseSize: cfg.MaxResponseSize, Timeout: cfg.Timeout,
			RespectCacheControl: cfg.CacheRespect,
			needsIdentity:       perCaller || len(o.FromIdentity()) > 0,
			keyPrefix:           base.String() + "\x00" + o.Method + " " + o.Path + "\x00"}
		t := &pipeline.Tool{
			Name:         o.Tool,
			Original:     o.ID,
			Title:        o.Op.Summary,
			Description:  o.Description(),
			InputSchema:  in,
			Annotations:  o.Annotations(),
			Aliases:      o.Aliases,
			FromIdentity: o.FromIdentity(),
			Executor:     x,
		}
		forced := len(cfg.CacheOperations) > 0 && (Options{Include: cfg.CacheOperations}).selects(o.Method, o.Path, o.Op)
		if cfg.CacheTTL > 0 && (o.Method == http.MethodGet || o.Method == http.MethodHead || forced) {
			t.Cache = &pipeline.CachePolicy{TTL: cfg.CacheTTL, Shared: !perCaller && len(t.FromIdentity) == 0}
		}
		if cfg.OutputSchemaStrict {
			if out := o.outputSchema(&dropped); out != nil {
				if t.OutputSchema, err = json.Marshal(out); err != nil {
					return nil, report, fmt.Errorf("%s: output schema: %v", o.Origin(), err)
				}
				x.output = o.outputRef()
			}
		}
		tools = append(tools, t)
	}
	slices.Sort(dropped)
	report.Patterns = slices.Compact(dropped)
	return tools, report, nil
}

// baseURL is the configured base URL, else the document's first server
// with its variables at their defaults, resolved against the document's
// own URL when relative.
func baseURL(doc *Document, configured string) (*url.URL, error) {
	raw := configured
	if raw == "" {
		var ok bool
		if raw, ok = firstServer(doc.Servers); !ok {
			return nil, fmt.Errorf("%s names no server: set base_url", doc.Location)
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("base URL %q: %v", raw, err)
	}
	if !u.IsAbs() {
		loc, err := url.Parse(doc.Location)
		if err != nil || (loc.Scheme != "http" && loc.Scheme != "https") {
			return nil, fmt.Errorf("the server URL %q is relative and the document was not read from a URL: set base_url", raw)
		}
		u = loc.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("base URL %q: want http or https", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("base URL %s: put credentials in a credential, not in the URL", u.Redacted())
	}
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// firstServer is the URL of a document's first server, its variables at
// their defaults; false when there is none.
func firstServer(servers openapi3.Servers) (string, bool) {
	if len(servers) == 0 || servers[0] == nil {
		return "", false
	}
	raw := servers[0].URL
	for name, v := range servers[0].Variables {
		if v != nil {
			raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
		}
	}
	return raw, true
}

// fileServer reads the document at location, when it is a file that can
// be read, just far enough to tell whether its first server is missing or
// relative (Swagger 2.0: no host), and describes it. Anything else (a URL,
// a missing file, a document that does not parse) is left to Provision.
func fileServer(location string, maxSize int64) (server string, relative bool) {
	if u, err := url.Parse(location); err == nil && (u.Scheme == "http" || u.Scheme == "https") || location == "" {
		return "", false
	}
	opt := LoadOptions{MaxSize: maxSize}
	opt.defaults()
	data, _, err := read(context.Background(), location, opt)
	if err != nil {
		return "", false
	}
	asJSON, err := toJSON(data)
	if err != nil {
		return "", false
	}
	var probe struct {
		Swagger string           `json:"swagger"`
		Host    string           `json:"host"`
		Servers openapi3.Servers `json:"servers"`
	}
	if json.Unmarshal(asJSON, &probe) != nil {
		return "", false
	}
	if strings.HasPrefix(probe.Swagger, "2.") {
		if probe.Host != "" {
			return "", false
		}
		return "the Swagger 2.0 document names no host", true
	}
	raw, ok := firstServer(probe.Servers)
	if !ok {
		return "the document names no server", true
	}
	if u, err := url.Parse(raw); err == nil && !u.IsAbs() {
		return fmt.Sprintf("the server URL %q is relative", raw), true
	}
	return "", false
}
