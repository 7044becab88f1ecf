package openapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v4"

	"github.com/edgemcp/edgemcp/internal/netguard"
)

// Defaults for reading a document.
const (
	DefaultMaxSpecSize = 32 << 20 // bytes
	DefaultLoadTimeout = 30 * time.Second
)

// LoadOptions bound how a document is read.
type LoadOptions struct {
	// MaxSize bounds the document and each external document it refers to.
	MaxSize int64
	// Timeout bounds fetching a URL (the whole response, not just the dial).
	Timeout time.Duration
	// AllowExternalRefs lets $refs point at other files or URLs. Off, a
	// document cannot make the gateway read anything else (no SSRF).
	AllowExternalRefs bool
	// Client fetches URLs; nil uses a client with Timeout that follows
	// redirects only within the origin of each request.
	Client *http.Client
	// Strict fails the load on any validation finding, instead of leaving
	// out the operations it concerns or only noting it (validate).
	Strict bool

	refs *refPolicy // what external $refs may read (Load sets it)
}

func (o *LoadOptions) defaults() {
	if o.MaxSize <= 0 {
		o.MaxSize = DefaultMaxSpecSize
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultLoadTimeout
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: o.Timeout, CheckRedirect: netguard.StayOnOrigin}
	}
}

// Document is a loaded OpenAPI document.
type Document struct {
	*openapi3.T
	// Location is where it was read from (a path or a URL).
	Location string
	// Digest identifies the bytes read, so a refresh can tell a changed
	// document from the same one.
	Digest [sha256.Size]byte
	// Converted says the document was Swagger 2.0, converted to OpenAPI 3.
	Converted bool
	// Findings are validation problems that change no call (a stray
	// field, an example without a value): the document is served anyway.
	Findings []string
	// invalid are the operations whose validation failed in a way that
	// changes their calls, with why: Operations leaves them out.
	invalid map[opKey]string
}

// opKey names an operation of the document.
type opKey struct{ method, path string }

// Load reads the document at location (a file path, a file:// URL or an
// http(s) URL), converts Swagger 2.0 to OpenAPI 3, resolves its $refs and
// validates it.
func Load(ctx context.Context, location string, opt LoadOptions) (*Document, error) {
	opt.defaults()
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	data, base, err := read(ctx, location, opt)
	if err != nil {
		return nil, err
	}
	opt.refs = newRefPolicy(base, opt.Timeout)
	doc, err := parse(ctx, data, base, location, opt)
	if err != nil {
		return nil, opt.refs.quiet(err)
	}
	return doc, nil
}

// parse turns the bytes of a document into a Document; base is its URL,
// against which relative external $refs resolve.
func parse(ctx context.Context, data []byte, base *url.URL, location string, opt LoadOptions) (*Document, error) {
	doc := &Document{Location: location, Digest: sha256.Sum256(data)}
	asJSON, err := toJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not a JSON or YAML document: %v", location, err)
	}
	var probe struct {
		Swagger string `json:"swagger"`
		OpenAPI string `json:"openapi"`
	}
	if err := json.Unmarshal(asJSON, &probe); err != nil {
		return nil, fmt.Errorf("%s: not an object at the top: %v", location, err)
	}
	loader := newLoader(ctx, opt)
	switch {
	case strings.HasPrefix(probe.Swagger, "2."):
		var v2 openapi2.T
		if err := json.Unmarshal(asJSON, &v2); err != nil {
			return nil, fmt.Errorf("%s: Swagger %s document: %v", location, probe.Swagger, err)
		}
		v3, err := openapi2conv.ToV3(&v2)
		if err != nil {
			return nil, fmt.Errorf("%s: converting Swagger %s to OpenAPI 3: %v", location, probe.Swagger, err)
		}
		// ToV3 leaves $refs as pointers into the converted document;
		// resolve them as the loader would have.
		if err := loader.ResolveRefsIn(v3, base); err != nil {
			return nil, fmt.Errorf("%s: %v", location, err)
		}
		doc.T, doc.Converted = v3, true
	case strings.HasPrefix(probe.OpenAPI, "3."):
		t, err := loadJSON(ctx, data, base, opt)
		if err != nil {
			// Not JSON, or refused: kin-openapi reads it and says why.
			if t, err = loader.LoadFromDataWithPath(data, base); err != nil {
				return nil, fmt.Errorf("%s: %v", location, err)
			}
		}
		doc.T = t
	default:
		return nil, fmt.Errorf("%s: not an OpenAPI 3 or Swagger 2.0 document (no \"openapi: 3.x\" or \"swagger: 2.0\" at the top)", location)
	}
	if err := validate(ctx, doc, opt.Strict); err != nil {
		return nil, fmt.Errorf("%s: invalid document: %v", location, err)
	}
	return doc, nil
}

// newLoader returns a kin-openapi loader that reads external $refs only
// when they are allowed, as refPolicy says, within the load's bounds.
func newLoader(ctx context.Context, opt LoadOptions) *openapi3.Loader {
	loader := openapi3.NewLoader()
	loader.Context = ctx
	loader.IsExternalRefsAllowed = opt.AllowExternalRefs
	refs := opt.refs
	if refs == nil {
		refs = newRefPolicy(nil, opt.Timeout)
	}
	refs.install(ctx, loader, opt)
	return loader
}

// loadJSON decodes an OpenAPI 3 document written in JSON through jsonNode
// and resolves its $refs, as kin-openapi's LoadFromDataWithPath does but
// without parsing JSON as YAML. Only when external $refs are off: a
// document loaded this way is not registered with the loader as the root
// one, which matters only to references that lead back to it from another
// document. Any error sends the caller back to kin-openapi's own load,
// whose message names the problem.
func loadJSON(ctx context.Context, data []byte, base *url.URL, opt LoadOptions) (*openapi3.T, error) {
	if opt.AllowExternalRefs {
		return nil, errors.New("external references are allowed")
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, errors.New("not JSON")
	}
	n, err := jsonNode(data)
	if err != nil {
		return nil, err
	}
	t := &openapi3.T{}
	if err := n.Decode(t); err != nil {
		return nil, err
	}
	if err := newLoader(ctx, opt).ResolveRefsIn(t, base); err != nil {
		return nil, err
	}
	return t, nil
}

// read returns the bytes at location, at most opt.MaxSize of them, and the
// URL relative references resolve against.
func read(ctx context.Context, location string, opt LoadOptions) ([]byte, *url.URL, error) {
	u, err := url.Parse(location)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		b, err := fetch(ctx, u, opt)
		return b, u, err
	}
	path := location
	if err == nil && u.Scheme == "file" {
		path = u.Path
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	b, err := readBounded(f, opt.MaxSize, location)
	return b, &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}, err
}

func fetch(ctx context.Context, u *url.URL, opt LoadOptions) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.5")
	res, err := opt.Client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the URL is named once, by the caller
		}
		return nil, fmt.Errorf("fetch %s: %v", u.Redacted(), err)
	}
	defer res.Body.Close()
	if res.StatusCode/100 == 3 && res.Header.Get("Location") != "" {
		return nil, fmt.Errorf("fetch %s: HTTP %s: a redirect to another origin is not followed", u.Redacted(), res.Status)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch %s: HTTP %s", u.Redacted(), res.Status)
	}
	return readBounded(res.Body, opt.MaxSize, u.Redacted())
}

// readBounded reads r whole, failing beyond max bytes.
func readBounded(r io.Reader, max int64, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %v", what, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes (max_spec_size)", what, max)
	}
	return bytes.Clone(b), nil
}

// toJSON returns a JSON or YAML document as JSON. YAML mapping keys that
// are not strings (response codes such as 200) become strings, as they are
// in the JSON form of a document.
func toJSON(data []byte) ([]byte, error) {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		return data, nil
	}
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return json.Marshal(stringKeys(v))
}

func stringKeys(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = stringKeys(e)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = stringKeys(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = stringKeys(e)
		}
		return v
	}
	return v
}
