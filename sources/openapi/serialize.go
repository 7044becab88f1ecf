package openapi

// Parameter serialization: turning one tool argument into the wire form of an
// OpenAPI 3.0/3.1 parameter (path, query, header or cookie) according to its
// style and explode settings.
//
// The shapes follow the specification's "Style Values" and "Style Examples"
// (RFC 6570 expansions, plus spaceDelimited, pipeDelimited and deepObject).
// What the tables leave open is decided here, always in the direction that
// keeps a caller's value inside its parameter:
//
//   - Object keys come out sorted (Go maps have no order); the wire form is
//     then deterministic, which tests and caches rely on.
//   - Arrays and objects nested inside arrays or objects have no form in these
//     styles (deepObject included: the specification defines one level only);
//     they are refused, as is null inside an array or object.
//   - In the path and query every value text is percent-encoded except the
//     RFC 3986 unreserved characters (A-Z a-z 0-9 - . _ ~; allowReserved
//     relaxes this for query values, see queryReservedKept), so no value can
//     add a path segment, a query pair, a fragment or a style delimiter. The
//     delimiters the style itself writes are the ones the examples table
//     shows (',' '|' '.' ';' '=' "%20" and deepObject's brackets), so values
//     and structure never mix. Header values are sent as they are but refuse
//     control characters; cookie values are percent-encoded outside RFC
//     6265's cookie-octets.
//   - An empty object key is refused: in the exploded styles it would become
//     an empty name, and deepObject's "name[]" means "append to a list" to
//     common decoders (PHP, qs).
//   - Errors name the parameter, never its value: values may be secrets.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// paramSpec is one OpenAPI 3 parameter as the serializer needs it.
type paramSpec struct {
	Name          string
	In            string // "path", "query", "header" or "cookie"
	Style         string // "" means the location's default: path simple, query form, header simple, cookie form
	Explode       *bool  // nil means the style's default: true for form, false for the others
	AllowReserved bool   // query only: RFC 3986 reserved characters are sent unescaped
}

// encoded is the wire form of one parameter value.
type encoded struct {
	Path   string   // In=path: the text that replaces "{name}" in the path template, already percent-escaped so that it can never leave its path segment (including the "." / ";" prefixes of label and matrix styles)
	Query  []string // In=query: "key=value" pairs, already escaped, in a deterministic order; the caller joins them with "&"
	Header string   // In=header: the header value
	Cookie []string // In=cookie: "name=value" pairs; the caller joins them with "; "
}

// Styles each location accepts; the first is the location's default.
var stylesByLocation = map[string][]string{
	"path":   {"simple", "label", "matrix"},
	"query":  {"form", "spaceDelimited", "pipeDelimited", "deepObject"},
	"header": {"simple"},
	"cookie": {"form"},
}

// Delimiters written literally, as the 3.1.0 "Style Examples" table shows
// them. The 3.0.4/3.1.1 table percent-encodes them (%7C, %5B, %5D), which RFC
// 3986 requires and which servers that refuse them raw (Tomcat's default)
// need; both forms decode to the same value, so switching is only this.
const (
	pipeDelimiter = "|"
	deepOpen      = "["
	deepClose     = "]"
)

var knownStyles = []string{"matrix", "label", "form", "simple", "spaceDelimited", "pipeDelimited", "deepObject"}

// validate refuses what the specification does not allow: an unknown
// location or style, a style used outside its locations, and header or cookie
// names that are not HTTP tokens (such a name could not be sent as is, and
// escaping it would change which header or cookie the upstream sees).
func (p paramSpec) validate() error {
	if p.Name == "" {
		return fmt.Errorf("parameter in %q has no name", p.In)
	}
	allowed, ok := stylesByLocation[p.In]
	if !ok {
		return fmt.Errorf("parameter %q: unknown location %q (want path, query, header or cookie)", p.Name, p.In)
	}
	if p.Style != "" && !slices.Contains(knownStyles, p.Style) {
		return fmt.Errorf("parameter %q in %s: unknown style %q", p.Name, p.In, p.Style)
	}
	if p.Style != "" && !slices.Contains(allowed, p.Style) {
		return fmt.Errorf("parameter %q in %s: style %q is not allowed there (allowed: %s)",
			p.Name, p.In, p.Style, strings.Join(allowed, ", "))
	}
	if (p.In == "header" || p.In == "cookie") && !isToken(p.Name) {
		return fmt.Errorf("parameter %q in %s: the name is not a valid HTTP token", p.Name, p.In)
	}
	return nil
}

// style returns the effective style and explode flag.
func (p paramSpec) style() (string, bool) {
	style := p.Style
	if style == "" {
		style = stylesByLocation[p.In][0]
	}
	explode := style == "form"
	if p.Explode != nil {
		explode = *p.Explode
	}
	return style, explode
}

// shape is a value reduced to what the styles can carry: nothing, one scalar
// text, a list of texts, or key/value texts with keys sorted.
type shape struct {
	kind  int // one of the kind constants
	text  string
	items []string
	pairs [][2]string
}

const (
	kindNull = iota
	kindScalar
	kindArray
	kindObject
)

func (s shape) isEmpty() bool {
	switch s.kind {
	case kindNull:
		return true
	case kindScalar:
		return s.text == ""
	case kindArray:
		return len(s.items) == 0
	default:
		return len(s.pairs) == 0
	}
}

// encode serializes value (a JSON-decoded value: nil, bool, string, float64,
// json.Number, int, int64, []any, map[string]any) according to the OpenAPI
// 3.0/3.1 style and explode rules.
//
// nil (JSON null) is the tables' "empty" case: "name=" for form, an empty
// header value for simple. Styles whose table cell is "n/a" refuse it, and so
// does every path style: a path parameter is always required and an empty
// segment (or a bare label ".") would change the path's meaning. Callers
// should leave absent optional parameters out rather than pass nil.
func (p paramSpec) encode(value any) (encoded, error) {
	if err := p.validate(); err != nil {
		return encoded{}, err
	}
	v, err := p.shapeOf(value)
	if err != nil {
		return encoded{}, err
	}
	style, explode := p.style()
	switch p.In {
	case "path":
		s, err := p.encodePath(style, explode, v)
		return encoded{Path: s}, err
	case "query":
		q, err := p.encodeQuery(style, explode, v)
		return encoded{Query: q}, err
	case "header":
		h, err := p.encodeHeader(explode, v)
		return encoded{Header: h}, err
	default: // cookie; validate has refused anything else
		c, err := p.encodeCookie(explode, v)
		return encoded{Cookie: c}, err
	}
}

func (p paramSpec) shapeOf(value any) (shape, error) {
	switch v := value.(type) {
	case nil:
		return shape{kind: kindNull}, nil
	case []any:
		items := make([]string, len(v))
		for i, e := range v {
			t, err := p.scalarText(e, true)
			if err != nil {
				return shape{}, err
			}
			items[i] = t
		}
		return shape{kind: kindArray, items: items}, nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		pairs := make([][2]string, len(keys))
		for i, k := range keys {
			if k == "" {
				return shape{}, fmt.Errorf("%s parameter %q: an object key is empty", p.In, p.Name)
			}
			t, err := p.scalarText(v[k], true)
			if err != nil {
				return shape{}, err
			}
			pairs[i] = [2]string{k, t}
		}
		return shape{kind: kindObject, pairs: pairs}, nil
	default:
		t, err := p.scalarText(value, false)
		return shape{kind: kindScalar, text: t}, err
	}
}

// scalarText renders a scalar as JSON would (numbers shortest and exact,
// json.Number as written, booleans true/false), strings as they are.
func (p paramSpec) scalarText(value any, inner bool) (string, error) {
	switch v := value.(type) {
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case int:
		return strconv.Itoa(v), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float64, json.Number:
		// encoding/json's formatting: 100 not 1e+02, 1e+21 beyond 1e21; it
		// refuses NaN, ±Inf and a json.Number that is not a number literal.
		b, err := json.Marshal(v)
		if err != nil {
			return "", fmt.Errorf("%s parameter %q: the value is not a finite JSON number", p.In, p.Name)
		}
		return string(b), nil
	case nil:
		if inner {
			return "", fmt.Errorf("%s parameter %q: null inside an array or object cannot be serialized", p.In, p.Name)
		}
	case []any, map[string]any:
		if inner {
			return "", fmt.Errorf("%s parameter %q: nested arrays or objects cannot be serialized (style %q)", p.In, p.Name, p.styleName())
		}
	}
	return "", fmt.Errorf("%s parameter %q: unsupported value type %T", p.In, p.Name, value)
}

func (p paramSpec) styleName() string {
	s, _ := p.style()
	return s
}

// ---- path ----

// encodePath renders simple, label and matrix. Value texts are escaped by
// escapePath, which leaves only unreserved characters literal, so '/', '?',
// '#', '%' and ';' cannot appear unescaped; a text made only of dots is
// escaped too ("%2E%2E"), so no value is a "." or ".." segment that a URL
// normalizer would collapse.
func (p paramSpec) encodePath(style string, explode bool, v shape) (string, error) {
	if v.isEmpty() {
		return "", fmt.Errorf("path parameter %q is empty", p.Name)
	}
	// In exploded label style '.' separates items, so it is escaped inside
	// them; elsewhere the style's delimiters are reserved characters, which
	// escapePath always escapes.
	var dots string
	if style == "label" && explode {
		dots = "."
	}
	esc := func(s string) string { return escapePath(s, dots) }
	var out string
	switch style {
	case "simple":
		out = joinShape(v, esc, ",", explode)
	case "label":
		if explode {
			out = "." + joinShape(v, esc, ".", true)
		} else {
			out = "." + joinShape(v, esc, ",", false)
		}
	case "matrix":
		name := escapePath(p.Name, "")
		param := func(text string) string { // RFC 6570 ";" expansion: no "=" for an empty text
			if text == "" {
				return ";" + name
			}
			return ";" + name + "=" + text
		}
		switch {
		case v.kind == kindScalar || !explode:
			out = param(joinShape(v, esc, ",", false))
		case v.kind == kindArray:
			for _, it := range v.items {
				out += param(esc(it))
			}
		default:
			for _, kv := range v.pairs {
				out += ";" + esc(kv[0]) + "=" + esc(kv[1])
			}
		}
	}
	// Items can be empty strings, so the output can still be empty ([""]
	// simple) or all dots (["",""] exploded label).
	if out == "" {
		return "", fmt.Errorf("path parameter %q is empty", p.Name)
	}
	if strings.Trim(out, ".") == "" {
		return "", fmt.Errorf("path parameter %q would form a dot segment", p.Name)
	}
	return out, nil
}

// joinShape renders a scalar, array or object with one delimiter: items
// "a,b,c"; object pairs as "k,v,k,v" or, exploded, "k=v,k=v".
func joinShape(v shape, esc func(string) string, sep string, explode bool) string {
	switch v.kind {
	case kindScalar:
		return esc(v.text)
	case kindArray:
		parts := make([]string, len(v.items))
		for i, it := range v.items {
			parts[i] = esc(it)
		}
		return strings.Join(parts, sep)
	case kindObject:
		parts := make([]string, 0, 2*len(v.pairs))
		for _, kv := range v.pairs {
			if explode {
				parts = append(parts, esc(kv[0])+"="+esc(kv[1]))
			} else {
				parts = append(parts, esc(kv[0]), esc(kv[1]))
			}
		}
		return strings.Join(parts, sep)
	}
	return ""
}

// ---- query ----

func (p paramSpec) encodeQuery(style string, explode bool, v shape) ([]string, error) {
	name := escapeQuery(p.Name, false, "")
	// Keys (parameter names, object keys) are always fully escaped; values
	// follow allowReserved. In a non-exploded list the style's delimiter is
	// escaped inside items even with allowReserved, so "a,b" stays one item.
	val := func(s string) string { return escapeQuery(s, p.AllowReserved, "") }
	item := func(s string) string { return escapeQuery(s, p.AllowReserved, ",") }
	key := func(s string) string { return escapeQuery(s, false, "") }

	switch style {
	case "form":
		switch {
		case v.kind == kindNull:
			return []string{name + "="}, nil
		case v.kind == kindScalar:
			return []string{name + "=" + val(v.text)}, nil
		case !explode:
			return []string{name + "=" + joinQuery(v, item, key, ",")}, nil
		case v.kind == kindArray:
			// An empty exploded list has no pairs: the parameter is absent.
			out := make([]string, len(v.items))
			for i, it := range v.items {
				out[i] = name + "=" + val(it)
			}
			return out, nil
		default:
			// Exploded form objects make each key a query name of its own,
			// as the specification defines ("R=100&G=200&B=150").
			out := make([]string, len(v.pairs))
			for i, kv := range v.pairs {
				out[i] = key(kv[0]) + "=" + val(kv[1])
			}
			return out, nil
		}

	case "spaceDelimited", "pipeDelimited":
		if v.kind != kindArray && v.kind != kindObject {
			return nil, fmt.Errorf("query parameter %q: style %s serializes arrays and objects only", p.Name, style)
		}
		if explode {
			// The tables define no exploded form; for arrays every tool
			// sends what form does (name=a&name=b), and so do we. An object
			// would lose its parameter name, so it is refused.
			if v.kind == kindObject {
				return nil, fmt.Errorf("query parameter %q: style %s with explode=true has no form for objects", p.Name, style)
			}
			return paramSpec{Name: p.Name, In: "query", AllowReserved: p.AllowReserved}.encodeQuery("form", true, v)
		}
		sep := pipeDelimiter
		if style == "spaceDelimited" {
			// A space inside an item would be sent as %20, the delimiter
			// itself: the upstream would see two items. Refused, not guessed.
			sep = "%20"
			for _, t := range shapeTexts(v) {
				if strings.Contains(t, " ") {
					return nil, fmt.Errorf("query parameter %q: style spaceDelimited cannot carry an item that contains a space", p.Name)
				}
			}
		}
		return []string{name + "=" + joinQuery(v, item, key, sep)}, nil

	default:
		// deepObject. The specification leaves explode=false undefined for it
		// although false is its default, so specs often omit explode; both
		// are serialized the same way, as every tool does.
		if v.kind != kindObject {
			return nil, fmt.Errorf("query parameter %q: style deepObject serializes objects only", p.Name)
		}
		out := make([]string, len(v.pairs))
		for i, kv := range v.pairs {
			// name[key]: the upstream splits on the brackets after decoding,
			// so a key holding a bracket cannot be told apart.
			if strings.ContainsAny(kv[0], "[]") {
				return nil, fmt.Errorf("query parameter %q: style deepObject cannot carry an object key that contains '[' or ']'", p.Name)
			}
			out[i] = name + deepOpen + key(kv[0]) + deepClose + "=" + val(kv[1])
		}
		return out, nil
	}
}

// joinQuery joins array items or object keys and values ("k,v,k,v") with sep.
func joinQuery(v shape, item, key func(string) string, sep string) string {
	if v.kind == kindArray {
		parts := make([]string, len(v.items))
		for i, it := range v.items {
			parts[i] = item(it)
		}
		return strings.Join(parts, sep)
	}
	parts := make([]string, 0, 2*len(v.pairs))
	for _, kv := range v.pairs {
		parts = append(parts, key(kv[0]), item(kv[1]))
	}
	return strings.Join(parts, sep)
}

func shapeTexts(v shape) []string {
	if v.kind == kindArray {
		return v.items
	}
	var out []string
	for _, kv := range v.pairs {
		out = append(out, kv[0], kv[1])
	}
	return out
}

// ---- header ----

// encodeHeader renders the simple style without percent-encoding (header
// values are not URIs). Control characters other than tab (CR, LF, NUL...)
// are refused: they could end the header and start another.
func (p paramSpec) encodeHeader(explode bool, v shape) (string, error) {
	out := ""
	if v.kind != kindNull {
		out = joinShape(v, func(s string) string { return s }, ",", explode)
	}
	for i := 0; i < len(out); i++ {
		if c := out[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return "", fmt.Errorf("header parameter %q contains a control character (CR, LF, NUL or another), which a header value cannot carry", p.Name)
		}
	}
	return out, nil
}

// ---- cookie ----

// encodeCookie renders the form style into "name=value" cookie pairs. Values
// are percent-encoded outside RFC 6265's cookie-octet set (so ';', ',',
// space, '"', '\' and control characters cannot end the cookie or add
// another), and so is '%' itself, so the upstream can decode the value back.
func (p paramSpec) encodeCookie(explode bool, v shape) ([]string, error) {
	val := func(s string) string { return escapeCookie(s, false) }
	key := func(s string) string { return escapeCookie(s, true) }
	switch {
	case v.kind == kindNull:
		return []string{p.Name + "="}, nil
	case v.kind == kindScalar:
		return []string{p.Name + "=" + val(v.text)}, nil
	case !explode:
		return []string{p.Name + "=" + joinQuery(v, val, key, ",")}, nil
	case v.kind == kindArray:
		out := make([]string, len(v.items))
		for i, it := range v.items {
			out[i] = p.Name + "=" + val(it)
		}
		return out, nil
	default:
		out := make([]string, len(v.pairs))
		for i, kv := range v.pairs {
			out[i] = key(kv[0]) + "=" + val(kv[1])
		}
		return out, nil
	}
}

// ---- escaping ----

const upperHex = "0123456789ABCDEF"

func isUnreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// escape percent-encodes every byte for which keep returns false.
func escape(s string, keep func(byte) bool) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !keep(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if keep(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
		}
	}
	return b.String()
}

// escapePath keeps only unreserved characters, minus those in extra. A text
// made only of dots is escaped whole: "." and ".." would be dot segments.
func escapePath(s, extra string) string {
	if s != "" && strings.Trim(s, ".") == "" {
		return strings.Repeat("%2E", len(s))
	}
	return escape(s, func(c byte) bool { return isUnreserved(c) && strings.IndexByte(extra, c) < 0 })
}

// queryReservedKept are the RFC 3986 reserved characters that allowReserved
// sends as they are. The rest of the reserved set stays escaped, because in
// a query it is structure, not data: '&' ends the pair, '=' ends the key,
// '#' starts the fragment, '+' decodes to a space in form decoding (Go's,
// PHP's, Java's), and ';' separates pairs for some decoders (older Python)
// and makes Go's url.ParseQuery fail.
const queryReservedKept = ":/?@!$'()*,[]"

// escapeQuery percent-encodes a query key or value. Space becomes %20, not
// '+': both decode to a space in form decoding, but %20 also means a space to
// RFC 3986 decoders, and it is what spaceDelimited's delimiter looks like.
// With allowReserved, queryReservedKept stays literal, minus those in extra.
func escapeQuery(s string, allowReserved bool, extra string) string {
	return escape(s, func(c byte) bool {
		if isUnreserved(c) {
			return true
		}
		return allowReserved && strings.IndexByte(queryReservedKept, c) >= 0 && strings.IndexByte(extra, c) < 0
	})
}

// escapeCookie keeps RFC 6265 cookie-octets except '%' (and, for a name,
// keeps only token characters, so '=' is escaped too).
func escapeCookie(s string, name bool) string {
	return escape(s, func(c byte) bool {
		if c == '%' {
			return false
		}
		if name {
			return isTokenChar(c)
		}
		return c == 0x21 || 0x23 <= c && c <= 0x2B || 0x2D <= c && c <= 0x3A ||
			0x3C <= c && c <= 0x5B || 0x5D <= c && c <= 0x7E
	})
}

// isTokenChar reports whether c is an RFC 9110 tchar.
func isTokenChar(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}
