package openapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/edgemcp/edgemcp/internal/netguard"
)

// refPolicy is what a document's external $refs may read, with
// allow_external_refs on. The operator named one thing, the document; the
// document names the rest, and a remote one (or a local one another
// process rewrites) is not the operator's to check. So:
//   - a local file only through a relative $ref of a local document,
//     resolved against it (kin-openapi resolves an absolute path, or a
//     file: URL, as a file whatever the document: a remote document could
//     read /etc/passwd);
//   - a URL on the origin of the document the operator named as that
//     document is reached (the same client and rules);
//   - a URL elsewhere only at a public address, checked as the connection
//     is made (netguard.PublicOnly), as a script's fetch() is;
//   - a redirect only within the origin of its request, as every source
//     request (netguard.StayOnOrigin).
//
// And the contents of a local file read this way never reach an error:
// the YAML decoder quotes the text it could not read (`root:x:...`).
type refPolicy struct {
	root   *url.URL        // where the document was read from (a file: or http(s) URL)
	joined map[string]bool // the local files relative $refs of local documents lead to
	public *http.Client    // for URLs off root's origin
	files  bool            // a local file other than root was read
}

// newRefPolicy is the policy of the document at root (nil: a document
// read from memory, which has no origin).
func newRefPolicy(root *url.URL, timeout time.Duration) *refPolicy {
	p := &refPolicy{root: root, joined: map[string]bool{}}
	if isLocal(root) {
		p.joined[root.Path] = true // kin-openapi reads the document again to look a fragment up
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // the address checked must be the one reached
	tr.DisableKeepAlives = true
	tr.DialContext = (&net.Dialer{Timeout: timeout, Control: netguard.PublicOnly}).DialContext
	p.public = &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: netguard.StayOnOrigin}
	return p
}

// isLocal reports whether u names a local file, as kin-openapi reads it.
func isLocal(u *url.URL) bool {
	return u != nil && u.Host == "" && u.Path != "" && (u.Scheme == "" || u.Scheme == "file")
}

// install makes loader resolve and read external $refs by the policy.
func (p *refPolicy) install(ctx context.Context, loader *openapi3.Loader, opt LoadOptions) {
	loader.JoinFunc = p.join
	loader.ReadFromURIFunc = func(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
		if !opt.AllowExternalRefs {
			return nil, fmt.Errorf("external $ref to %s: external references are off (allow_external_refs)", u.Redacted())
		}
		switch {
		case isLocal(u):
			if !p.joined[path.Clean(u.Path)] {
				return nil, fmt.Errorf("external $ref to %s: a local file is read only through a relative $ref of a local document", u.Redacted())
			}
			p.files = p.files || p.root == nil || u.Path != p.root.Path
			b, _, err := read(ctx, u.Path, opt)
			return b, err
		case u.Scheme == "http" || u.Scheme == "https":
			o := opt
			if p.root == nil || !netguard.SameOrigin(u, p.root) {
				o.Client = p.public
			}
			return fetch(ctx, u, o)
		}
		return nil, fmt.Errorf("external $ref to %s: want a relative file or an http(s) URL", u.Redacted())
	}
}

// join resolves a relative $ref against the document it is in, as
// kin-openapi does, and notes the local files it leads to.
func (p *refPolicy) join(base, rel *url.URL) *url.URL {
	if base == nil {
		return rel
	}
	out := *base
	out.Path = path.Join(path.Dir(base.Path), rel.Path)
	if isLocal(&out) {
		p.joined[out.Path] = true
	}
	return &out
}

// quoted is a YAML error's quote of the text it could not read.
var quoted = regexp.MustCompile("`[^`]*`")

// quiet takes the quotes out of err when a local file was read: they
// would show its contents.
func (p *refPolicy) quiet(err error) error {
	if err == nil || !p.files {
		return err
	}
	return errors.New(quoted.ReplaceAllString(err.Error(), "`…`"))
}
