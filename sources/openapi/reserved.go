package openapi

import (
	"fmt"
	"iter"
	"net/url"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/edgemcp/edgemcp/sources/upstream"
)

// protectedNames are the names only the gateway may put in a request: the
// parameters the operator fixes (`set`) and the headers, query keys and
// cookies its credentials set. No argument may produce one, in any
// location: a declared parameter of such a name is fixed or left out when
// the document is read (collectParams), and every name a caller's argument
// puts on the wire is checked as the request is assembled (refuse), because
// the document cannot say in advance which names an object argument makes:
// an exploded form object turns its keys into query names, so
// {"filter": {"tenant": "other"}} would send ?tenant=other&tenant=mine,
// and many frameworks read the first.
//
// Names are compared in the form under which some common parser takes two
// names for one (canonicalName), in every location alike: a name one
// backend reads as the query key "tenant" is refused though another would
// read it as a name of its own. A refused call says so (-32000) and sends
// nothing.
type protectedNames map[string]protectedName

// protectedName is one name and whose it is.
type protectedName struct {
	owner string          // for messages: "set tenant", "a credential"
	fixed *upstream.Fixed // the value of a `set`; nil for a credential's
}

// newProtectedNames indexes the names of the credentials (reserved) and of
// the fixed parameters. Two that compare equal are a configuration error:
// the gateway would send two values under one name.
func newProtectedNames(reserved upstream.Reserved, fixed map[string]upstream.Fixed) (protectedNames, error) {
	n := protectedNames{}
	for _, list := range [][]string{reserved.Headers, reserved.Query, reserved.Cookies} {
		for _, name := range list {
			n[string(canonicalName(nil, name, false))] = protectedName{owner: "a credential"}
		}
	}
	names := make([]string, 0, len(fixed))
	for name := range fixed {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		key := string(canonicalName(nil, name, false))
		if prev, ok := n[key]; ok {
			return nil, fmt.Errorf("set %s: %s sets that name already", name, prev.owner)
		}
		f := fixed[name]
		n[key] = protectedName{owner: "set " + name, fixed: &f}
	}
	return n, nil
}

// lookup returns the protected name that name compares equal to.
func (n protectedNames) lookup(name string) (protectedName, bool) {
	var buf [64]byte
	p, ok := n[string(canonicalName(buf[:0], name, false))]
	return p, ok
}

// refuse checks the wire form enc of a caller's argument for parameter p:
// the query names and cookie names it makes, the header it sets (and, for
// a "Cookie" header parameter, the cookie names in its value), and the
// matrix parameters of a path value (";name=value").
func (n protectedNames) refuse(p *parameter, enc encoded) error {
	if len(n) == 0 {
		return nil
	}
	switch p.In {
	case "query":
		return n.refusePairs(p.Property, "query", slices.Values(enc.Query))
	case "cookie":
		return n.refusePairs(p.Property, "cookie", slices.Values(enc.Cookie))
	case "header":
		if err := n.refuseName(p.Property, "header", p.Name, false); err != nil {
			return err
		}
		if strings.EqualFold(p.Name, "Cookie") {
			return n.refusePairs(p.Property, "cookie", strings.SplitSeq(enc.Header, ";"))
		}
	case "path":
		if _, matrix, ok := strings.Cut(enc.Path, ";"); ok {
			return n.refusePairs(p.Property, "path", strings.SplitSeq(matrix, ";"))
		}
	}
	return nil
}

// refusePairs checks the names of "name=value" pairs, percent-encoded.
func (n protectedNames) refusePairs(property, in string, pairs iter.Seq[string]) error {
	for pair := range pairs {
		name, _, _ := strings.Cut(pair, "=")
		if err := n.refuseName(property, in, name, true); err != nil {
			return err
		}
	}
	return nil
}

// refuseBody checks the field names a request body puts on the wire,
// which frameworks that merge the body with the query (PHP's $_REQUEST,
// Rails' params, Laravel's input) read as parameters: a JSON object's
// members (the keys of v), a form's fields and a multipart body's parts
// as encoded (enc: a styled property's object makes its keys names of
// their own, as an exploded query object does). A text or binary body
// has no names.
func (n protectedNames) refuseBody(kind bodyKind, v any, enc encodedBody) error {
	if len(n) == 0 {
		return nil
	}
	switch kind {
	case bodyJSON:
		if obj, ok := v.(map[string]any); ok {
			for k := range obj {
				if err := n.refuseName(bodyProperty, "body field", k, false); err != nil {
					return err
				}
			}
		}
	case bodyForm:
		return n.refusePairs(bodyProperty, "form field", slices.Values(enc.pairs))
	case bodyMultipart:
		for _, name := range enc.parts {
			if err := n.refuseName(bodyProperty, "multipart part", name, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkTemplate checks the names of a path template's own query
// (Operation.query, "?a=1&b={b}") when the document is read. A literal
// name the gateway sets would go upstream next to the gateway's, from the
// document; but "name={name}" whose variable the `set` of that name fixes
// is the operator's own. A name a variable fills in ("{k}=1") is checked
// at each call (refuseTemplate), which reads the query pair for pair: a
// variable that spans pairs ("{a&b}") is refused here.
func (n protectedNames) checkTemplate(query string) error {
	if len(n) == 0 || query == "" {
		return nil
	}
	for pair := range strings.SplitSeq(query, "&") {
		if strings.Count(pair, "{") != strings.Count(pair, "}") {
			return fmt.Errorf("its path template's query pair %q splits a variable", pair)
		}
		name, value, _ := strings.Cut(pair, "=")
		if strings.Contains(name, "{") {
			continue
		}
		p, ok := n[string(canonicalName(nil, name, true))]
		if !ok {
			continue
		}
		if p.fixed != nil && strings.HasPrefix(value, "{") && strings.HasSuffix(value, "}") {
			if f, ok := n.lookup(value[1 : len(value)-1]); ok && f.fixed == p.fixed {
				continue
			}
		}
		return fmt.Errorf("its path template sends the query name %q, which %s sets", name, p.owner)
	}
	return nil
}

// refuseTemplate checks the names a caller's path arguments fill into the
// template's own query ("?{sel}", "?{kind}_id=1"); sent is that query as
// the call made it. A path value holds no '&' (escapePath) and no
// variable spans pairs (checkTemplate), so sent's pairs are o.query's,
// one for one.
func (o *Operation) refuseTemplate(sent string) error {
	if len(o.protected) == 0 {
		return nil
	}
	tmpl := o.query
	for tmpl != "" {
		var pair, made string
		pair, tmpl, _ = strings.Cut(tmpl, "&")
		made, sent, _ = strings.Cut(sent, "&")
		name, _, _ := strings.Cut(pair, "=")
		if !strings.Contains(name, "{") {
			continue
		}
		for _, v := range pathParams(name) {
			i := slices.IndexFunc(o.Params, func(p *parameter) bool { return p.In == openapi3.ParameterInPath && p.Name == v && p.Fixed == nil })
			if i < 0 {
				continue
			}
			madeName, _, _ := strings.Cut(made, "=")
			if err := o.protected.refuseName(o.Params[i].Property, "query", madeName, true); err != nil {
				return err
			}
			break
		}
	}
	return nil
}

func (n protectedNames) refuseName(property, in, name string, encoded bool) error {
	var buf [64]byte
	p, ok := n[string(canonicalName(buf[:0], name, encoded))]
	if !ok {
		return nil
	}
	if encoded {
		if plain, err := url.QueryUnescape(name); err == nil {
			name = plain
		}
	}
	return fmt.Errorf("input %q: it would send the %s name %q, which %s sets; an argument cannot", property, in, name, p.owner)
}

// canonicalName appends to dst the form of name under which request
// parsers could take it for another name:
//   - percent-decoded when encoded ('+' as a space, as form decoding reads
//     it; an invalid escape stays as it is);
//   - without surrounding whitespace: cookie parsers trim names, so
//     "tenant =x" is a "tenant" cookie, and PHP drops leading spaces;
//   - up to a '[': PHP, qs and Rails read "tenant[x]" as a key of "tenant",
//     which replaces a plain "tenant";
//   - in lower case: header names fold case, and so do ASP.NET's query and
//     form binding;
//   - with '-', '.' and ' ' as '_': CGI and the servers that follow it (PHP,
//     WSGI) read the header X-Tenant-Id as HTTP_X_TENANT_ID, as they read
//     X_Tenant_Id, and PHP reads the query key "tenant.id" as "tenant_id".
func canonicalName(dst []byte, name string, encoded bool) []byte {
	start := len(dst)
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case encoded && c == '+':
			c = ' '
		case encoded && c == '%' && i+2 < len(name) && isHex(name[i+1]) && isHex(name[i+2]):
			c = unhex(name[i+1])<<4 | unhex(name[i+2])
			i += 2
		}
		dst = append(dst, c)
	}
	s := dst[start:]
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	for i, c := range s {
		if c == '[' && i > 0 {
			s = s[:i]
			break
		}
	}
	if !isASCII(s) {
		s = []byte(strings.ToLower(string(s))) // rare: other memory, so the loop below may grow it
	}
	out := dst[:start]
	for _, c := range s {
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case c == '-' || c == '.' || c == ' ':
			c = '_'
		}
		out = append(out, c)
	}
	return out
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

// isHex reports whether c is a hexadecimal digit (of a percent escape, a
// pattern's \x41 or \u0041).
func isHex[C byte | rune](c C) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
