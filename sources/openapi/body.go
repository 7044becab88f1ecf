package openapi

// Request bodies: which of an operation's media types the gateway sends,
// what a caller gives for it, and the bytes that go upstream (README,
// Sources: OpenAPI, request bodies).
//
//	JSON (application/json with any parameters, any +json, */*)  the value as JSON
//	application/x-www-form-urlencoded                               an object, one field per property
//	multipart/form-data                                             an object, one part per property (arrays: one per item)
//	text (text/*, XML, YAML...)                                     a string, sent as it is
//	anything else (application/octet-stream, image/*, ...)          a base64 string, sent decoded
//
// Form properties follow the document's encoding object and, without one,
// its defaults (OpenAPI 3.1.1, Encoding Object): objects are JSON (in a
// multipart part of type application/json), other values text, arrays one
// field or part per item; a property with an explicit style, explode or
// allowReserved is serialized as a query parameter of that style would be.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// bodyKind is how a request body's value is written.
type bodyKind int

const (
	bodyJSON bodyKind = iota
	bodyForm
	bodyMultipart
	bodyText
	bodyBinary
)

// requestBody is the request body an operation takes, in the media type the
// gateway sends it as.
type requestBody struct {
	MediaType string   // as the document writes it
	Kind      bodyKind // how the value is written
	// Schema is what the caller's value is checked against: the
	// document's, or a string for a text or binary body whose document
	// schema describes the content rather than the value.
	Schema   *openapi3.SchemaRef
	Encoding openapi3.Encodings // form and multipart: per property
	Required bool
	Desc     string
	// styledParts: the document is OpenAPI 3.1 or later, where style and
	// explode apply to multipart/form-data too (3.0: only to forms).
	styledParts bool
}

// baseMediaType is a media type without its parameters, in lower case.
func baseMediaType(mt string) string {
	if base, _, err := mime.ParseMediaType(mt); err == nil {
		return base
	}
	base, _, _ := strings.Cut(mt, ";")
	return strings.ToLower(strings.TrimSpace(base))
}

// textTypes are application/* media types whose content is text.
var textTypes = []string{"application/xml", "application/yaml", "application/x-yaml", "application/javascript",
	"application/graphql", "application/sql", "application/x-ndjson", "application/text", "application/csv"}

// mediaKind sorts a media type into how the gateway writes it; false for
// what it cannot write (multipart types other than form-data, whose parts
// have no names to correlate with properties).
func mediaKind(mt string) (bodyKind, bool) {
	base := baseMediaType(mt)
	switch {
	case isJSON(base) || base == "*/*":
		return bodyJSON, true
	case base == "application/x-www-form-urlencoded":
		return bodyForm, true
	case base == "multipart/form-data":
		return bodyMultipart, true
	case strings.HasPrefix(base, "multipart/"):
		return 0, false
	case strings.HasPrefix(base, "text/") || strings.HasSuffix(base, "+xml") || slices.Contains(textTypes, base):
		return bodyText, true
	}
	return bodyBinary, true
}

// bodyRank orders the media types an operation accepts by preference:
// exact JSON, JSON with parameters or a suffix, */*, forms, plain text,
// other text, then bytes.
func bodyRank(mt string, kind bodyKind) int {
	base := baseMediaType(mt)
	switch kind {
	case bodyJSON:
		switch {
		case mt == "application/json":
			return 0
		case base == "*/*":
			return 2
		}
		return 1
	case bodyForm:
		return 3
	case bodyMultipart:
		return 4
	case bodyText:
		if base == "text/plain" {
			return 5
		}
		return 6
	}
	return 7
}

// chooseBody picks the media type a request body is sent as.
func chooseBody(rb *openapi3.RequestBody, styledParts bool) (*requestBody, error) {
	names := make([]string, 0, len(rb.Content))
	for mt := range rb.Content {
		names = append(names, mt)
	}
	if len(names) == 0 {
		return nil, nil
	}
	sort.Strings(names)
	best, bestRank := "", -1
	var bestKind bodyKind
	for _, mt := range names {
		kind, ok := mediaKind(mt)
		if !ok {
			continue
		}
		if r := bodyRank(mt, kind); bestRank < 0 || r < bestRank {
			best, bestRank, bestKind = mt, r, kind
		}
	}
	if bestRank < 0 {
		return nil, fmt.Errorf("request body: no media type the gateway can send (the document offers %s)", strings.Join(names, ", "))
	}
	m := rb.Content[best]
	b := &requestBody{MediaType: best, Kind: bestKind, Required: rb.Required, Desc: rb.Description, styledParts: styledParts}
	if m != nil {
		b.Schema, b.Encoding = m.Schema, m.Encoding
	}
	// */* whose schema is bytes (a file upload) is sent as bytes.
	if baseMediaType(best) == "*/*" && isBinarySchema(b.Schema) {
		b.Kind = bodyBinary
	}
	if b.Kind == bodyBinary || b.Kind == bodyText && !isStringSchema(b.Schema) {
		b.Schema = openapi3.NewStringSchema().NewRef()
	}
	return b, nil
}

func isStringSchema(ref *openapi3.SchemaRef) bool {
	return ref != nil && ref.Value != nil && ref.Value.Type.Is("string")
}

// isBinarySchema: a string of bytes (format binary), which JSON cannot
// carry as they are.
func isBinarySchema(ref *openapi3.SchemaRef) bool {
	return isStringSchema(ref) && ref.Value.Format == "binary"
}

// inputSchema is the body's input property in tools/list.
func (b *requestBody) inputSchema(dropped *[]string) map[string]any {
	s := jsonSchema(b.Schema, forRequest, dropped)
	switch b.Kind {
	case bodyBinary:
		s["contentEncoding"] = "base64"
		s["description"] = joinText(b.Desc, fmt.Sprintf("The %s content, base64-encoded.", b.MediaType))
		return s
	case bodyText:
		s["description"] = joinText(b.Desc, fmt.Sprintf("The %s content.", b.MediaType))
		return s
	case bodyMultipart:
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			ps, ok := p.(map[string]any)
			if !ok || !b.binaryPart(name) {
				continue
			}
			if ps["type"] == "array" {
				ps, _ = ps["items"].(map[string]any)
			}
			if ps != nil {
				desc, _ := ps["description"].(string)
				ps["contentEncoding"] = "base64"
				ps["description"] = joinText(desc, "The file's content, base64-encoded.")
			}
		}
	}
	if b.Desc != "" {
		s["description"] = b.Desc
	}
	return s
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// property is the schema of one of the body's properties (items for an
// array), nil when the schema does not say.
func (b *requestBody) property(name string) *openapi3.SchemaRef {
	if b.Schema == nil || b.Schema.Value == nil {
		return nil
	}
	p := b.Schema.Value.Properties[name]
	if p != nil && p.Value != nil && p.Value.Type.Is("array") {
		return p.Value.Items
	}
	return p
}

// binaryPart: a multipart property whose parts are files (format binary,
// or an encoding contentType that is neither JSON nor text).
func (b *requestBody) binaryPart(name string) bool {
	if b.styled(name) {
		return false
	}
	if e := b.Encoding[name]; e != nil && e.ContentType != "" {
		kind, ok := mediaKind(firstMediaType(e.ContentType))
		return ok && kind == bodyBinary
	}
	return isBinarySchema(b.property(name))
}

// styled: the property has an explicit style, explode or allowReserved,
// so it is serialized as a query parameter of that style would be.
func (b *requestBody) styled(name string) bool {
	e := b.Encoding[name]
	if e == nil || b.Kind == bodyMultipart && !b.styledParts {
		return false
	}
	return e.Style != "" || e.Explode != nil || e.AllowReserved
}

// firstMediaType is the first of an encoding's comma-separated contentType.
func firstMediaType(list string) string {
	first, _, _ := strings.Cut(list, ",")
	return strings.TrimSpace(first)
}

// encodedBody is a request body as it is sent, with the names it puts on
// the wire for the names check (protectedNames.refuseBody).
type encodedBody struct {
	data        []byte
	contentType string
	pairs       []string // a form's "name=value" pairs, escaped, as sent
	parts       []string // a multipart body's part names, as its parser reads them
}

// encode writes v in the body's media type.
func (b *requestBody) encode(v any) (encodedBody, error) {
	switch b.Kind {
	case bodyJSON:
		ct := b.MediaType
		if baseMediaType(ct) == "*/*" {
			ct = "application/json"
		}
		out, err := json.Marshal(v)
		return encodedBody{data: out, contentType: ct}, err
	case bodyForm:
		pairs, err := b.form(v)
		return encodedBody{data: []byte(strings.Join(pairs, "&")), contentType: b.MediaType, pairs: pairs}, err
	case bodyMultipart:
		return b.multipart(v)
	case bodyText:
		s, ok := v.(string)
		if !ok {
			return encodedBody{}, fmt.Errorf("a %s body must be a string", b.MediaType)
		}
		ct := b.MediaType
		if strings.Contains(ct, "*") {
			ct = "text/plain; charset=utf-8"
		}
		return encodedBody{data: []byte(s), contentType: ct}, nil
	default:
		data, err := decodeBase64(v)
		if err != nil {
			return encodedBody{}, err
		}
		return encodedBody{data: data, contentType: concreteType(b.MediaType, data)}, nil
	}
}

// decodeBase64 reads a binary value: standard or URL-safe base64, padded
// or not. The error never quotes the value.
func decodeBase64(v any) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return nil, errors.New("binary content must be a base64 string")
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if data, err := enc.DecodeString(s); err == nil {
			return data, nil
		}
	}
	return nil, errors.New("binary content must be base64 (standard or URL-safe)")
}

// concreteType is the Content-Type for bytes of a media type that may be
// a wildcard (image/*, */*): the sniffed type when it fits, else
// application/octet-stream.
func concreteType(mt string, data []byte) string {
	if !strings.Contains(mt, "*") {
		return mt
	}
	sniffed, _, _ := strings.Cut(http.DetectContentType(data), ";")
	if major, _, _ := strings.Cut(baseMediaType(mt), "/"); major == "*" || strings.HasPrefix(sniffed, major+"/") {
		return sniffed
	}
	return "application/octet-stream"
}

// bodyObject is a form body's value as an object, with its keys in a
// stable order (sorted).
func bodyObject(v any, mediaType string) (map[string]any, []string, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("a %s body must be an object", mediaType)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return obj, keys, nil
}

// styledPairs serializes a styled property as a query parameter: escaped
// "name=value" pairs.
func (b *requestBody) styledPairs(name string, v any) ([]string, error) {
	e := b.Encoding[name]
	spec := paramSpec{Name: name, In: openapi3.ParameterInQuery, Style: e.Style, Explode: e.Explode, AllowReserved: e.AllowReserved}
	enc, err := spec.encode(v)
	if err != nil {
		return nil, err
	}
	return enc.Query, nil
}

// form writes an application/x-www-form-urlencoded body: its escaped
// "name=value" pairs, to be joined with '&'.
func (b *requestBody) form(v any) ([]string, error) {
	obj, keys, err := bodyObject(v, b.MediaType)
	if err != nil {
		return nil, err
	}
	var pairs []string
	for _, k := range keys {
		if b.styled(k) {
			p, err := b.styledPairs(k, obj[k])
			if err != nil {
				return nil, fmt.Errorf("field %q: %v", k, err)
			}
			pairs = append(pairs, p...)
			continue
		}
		for _, e := range items(obj[k]) {
			s, err := formText(e)
			if err != nil {
				return nil, fmt.Errorf("field %q: %v", k, err)
			}
			pairs = append(pairs, url.QueryEscape(k)+"="+url.QueryEscape(s))
		}
	}
	return pairs, nil
}

// items is an array's elements, or the value alone.
func items(v any) []any {
	if list, ok := v.([]any); ok {
		return list
	}
	return []any{v}
}

// multipart writes a multipart/form-data body: one part per property, one
// per item for an array (the same name repeated, RFC 7578 section 4.3).
func (b *requestBody) multipart(v any) (encodedBody, error) {
	obj, keys, err := bodyObject(v, b.MediaType)
	if err != nil {
		return encodedBody{}, err
	}
	var buf bytes.Buffer
	w := &partWriter{Writer: multipart.NewWriter(&buf)}
	for _, k := range keys {
		if err := b.writeParts(w, k, obj[k]); err != nil {
			return encodedBody{}, fmt.Errorf("part %q: %v", k, err)
		}
	}
	if err := w.Close(); err != nil {
		return encodedBody{}, err
	}
	return encodedBody{data: buf.Bytes(), contentType: w.FormDataContentType(), parts: w.names}, nil
}

// partWriter writes the parts of a multipart body and notes the name of
// each, for the names check. The name noted is the key as given: a
// parser reads the quoted Content-Disposition back to it, but for a CR or
// LF, which the escape writes as %0D, %0A (quoteEscaper).
type partWriter struct {
	*multipart.Writer
	names []string
}

func (w *partWriter) part(name string, h textproto.MIMEHeader) (io.Writer, error) {
	w.names = append(w.names, name)
	return w.CreatePart(h)
}

func (w *partWriter) field(name, value string) error {
	w.names = append(w.names, name)
	return w.WriteField(name, value)
}

func (b *requestBody) writeParts(w *partWriter, name string, v any) error {
	if b.styled(name) {
		pairs, err := b.styledPairs(name, v)
		if err != nil {
			return err
		}
		for _, p := range pairs {
			k, val, _ := strings.Cut(p, "=")
			k, _ = url.QueryUnescape(k)
			val, _ = url.QueryUnescape(val)
			if err := w.field(k, val); err != nil {
				return err
			}
		}
		return nil
	}
	binary := b.binaryPart(name)
	explicit := ""
	if e := b.Encoding[name]; e != nil {
		explicit = firstMediaType(e.ContentType)
	}
	for _, item := range items(v) {
		h := textproto.MIMEHeader{}
		disposition := fmt.Sprintf(`form-data; name="%s"`, quoteEscaper.Replace(name))
		var data []byte
		switch {
		case binary:
			d, err := decodeBase64(item)
			if err != nil {
				return err
			}
			data = d
			h.Set("Content-Type", concreteType(orDefault(explicit, "application/octet-stream"), d))
			disposition += fmt.Sprintf(`; filename="%s"`, quoteEscaper.Replace(name))
		case explicit != "" && isJSON(baseMediaType(explicit)), explicit == "" && isStructured(item):
			d, err := json.Marshal(item)
			if err != nil {
				return err
			}
			data = d
			h.Set("Content-Type", orDefault(explicit, "application/json"))
		default:
			s, err := formText(item)
			if err != nil {
				return err
			}
			data = []byte(s)
			if explicit != "" && baseMediaType(explicit) != "text/plain" {
				h.Set("Content-Type", explicit)
			}
		}
		h.Set("Content-Disposition", disposition)
		pw, err := w.part(name, h)
		if err != nil {
			return err
		}
		if _, err := pw.Write(data); err != nil {
			return err
		}
	}
	return nil
}

// quoteEscaper escapes a name inside a quoted Content-Disposition
// parameter as mime/multipart's CreateFormField does (and browsers): the
// name is a key of the caller's body, and a raw CR LF would start a
// header, or a part, of the caller's making.
var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"", "\r", "%0D", "\n", "%0A")

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// isStructured: an object or array, which a form writes as JSON.
func isStructured(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// formText is a form value's text: a string as it is, anything else as
// JSON (numbers as written, objects compact), null as empty.
func formText(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case nil:
		return "", nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}
