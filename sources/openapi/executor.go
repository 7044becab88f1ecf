package openapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// Defaults of an Executor.
const (
	DefaultMaxResponseSize = 8 << 20 // bytes
	DefaultTimeout         = 30 * time.Second
)

// Executor runs one operation's calls: it checks the arguments, builds the
// request, adds the credentials, sends it (with retries and through the
// source's breaker) and turns the response into a result.
type Executor struct {
	Op          *Operation
	Base        *url.URL     // the server URL paths are appended to
	Client      *http.Client // shared by a source's operations (upstream.NewClient)
	Credentials []upstream.Credential
	Retry       upstream.Retry
	Breaker     *upstream.Breaker // nil: none
	// MaxResponseSize bounds the response body read (max_response_size).
	MaxResponseSize int64
	// Timeout bounds the whole call, retries and response body included.
	Timeout time.Duration
	// RespectCacheControl passes the upstream's Cache-Control on to the
	// result cache (no-store and private: not cached; max-age: at most).
	RespectCacheControl bool
	// needsIdentity: a credential or a fixed parameter depends on the
	// caller, so an unverified caller's result is never cached (it has no
	// identity to key it by).
	needsIdentity bool
	// keyPrefix starts every cache key: server, method, path template.
	keyPrefix string
	// output is the response schema published as the tool's outputSchema
	// (output_schema strict): an answer outside it is an isError result.
	output *openapi3.SchemaRef
}

// CacheKey implements pipeline.CacheKeyer: the request's target (server,
// method, path template) and the arguments, so that entries of another
// base URL or operation are never served for this one.
func (x *Executor) CacheKey(_ context.Context, call *pipeline.Call) ([]byte, error) {
	if x.needsIdentity && call.Identity == nil {
		return nil, nil
	}
	args, err := json.Marshal(call.Inputs) // map keys sorted: canonical
	if err != nil {
		return nil, nil
	}
	return append([]byte(x.keyPrefix), args...), nil
}

var _ pipeline.Executor = (*Executor)(nil)

func (x *Executor) Execute(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
	if err := x.Op.checkArgs(call.Inputs); err != nil {
		return nil, pipeline.Fail(pipeline.StageValidation, err, "%s", err.Error())
	}
	timeout := x.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := x.Op.newRequest(ctx, x.Base, call)
	if err != nil {
		if pe, ok := err.(*pipeline.Error); ok {
			return nil, pe // an identity value the caller lacks: authentication
		}
		return nil, pipeline.Fail(pipeline.StageValidation, err, "%s", err.Error())
	}
	for _, c := range x.Credentials {
		if err := c.Apply(ctx, req, call); err != nil {
			return nil, err
		}
	}
	qctx, end := pipeline.ObserveQuery(ctx, call, pipeline.QueryInfo{System: "http", Statement: x.Op.Method + " " + x.Op.Path, Server: x.Base.Host})
	res, err := x.Retry.Send(qctx, x.Client, req.WithContext(qctx), x.Breaker)
	if err == nil && (res.StatusCode < 200 || res.StatusCode > 299) {
		err = upstream.NewStatusError(res, upstream.Secrets(req, x.Credentials)...)
		res.Body.Close()
	}
	end(err)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	max := x.MaxResponseSize
	if max <= 0 {
		max = DefaultMaxResponseSize
	}
	body, err := upstream.ReadBody(res, max)
	if err != nil {
		return nil, err
	}
	out, err := result(req.URL, res, body)
	if err == nil && x.output != nil {
		out, err = x.checkOutput(out, body)
	}
	if err == nil && x.RespectCacheControl {
		out.NoStore, out.MaxAge = cacheControl(res.Header)
	}
	return out, err
}

// checkOutput holds an answer to the published outputSchema: a client
// refuses structuredContent outside it (the TypeScript SDK answers
// -32602), and a tool with an outputSchema must send structuredContent, so
// an answer that is not a matching JSON object becomes an isError result
// that says why.
func (x *Executor) checkOutput(out *pipeline.Result, body []byte) (*pipeline.Result, error) {
	why := "the upstream's answer is not a JSON object"
	if out.Canonical { // objectResult: a JSON object
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, upstream.Failed("upstream sent invalid JSON", err)
		}
		err := x.output.Value.VisitJSON(plainJSON(v), openapi3.VisitAsResponse(), openapi3.SetSchemaRegexCompiler(argumentPatterns))
		if err == nil {
			return out, nil
		}
		why = "the upstream's answer does not match the operation's response schema: " + schemaErrorText(err)
	}
	return native(map[string]any{"isError": true, "content": []any{map[string]any{"type": "text",
		"text": why + " (output_schema strict)"}}}, out.Meta)
}

// cacheControl reads what a response's Cache-Control says about keeping
// it: no-store and private (the gateway's cache serves other callers) mean
// not at all, max-age (s-maxage first: the gateway is a shared cache)
// bounds how long.
func cacheControl(h http.Header) (noStore bool, maxAge time.Duration) {
	maxAge = -1
	for _, v := range h.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(name) {
			case "no-store", "private", "no-cache":
				noStore = true
			case "s-maxage":
				if n, err := strconv.Atoi(strings.Trim(val, `"`)); err == nil && n >= 0 {
					maxAge = time.Duration(n) * time.Second
				}
			case "max-age":
				if n, err := strconv.Atoi(strings.Trim(val, `"`)); err == nil && n >= 0 && maxAge < 0 {
					maxAge = time.Duration(n) * time.Second
				}
			}
		}
	}
	if maxAge == 0 {
		noStore = true
	}
	return noStore, max(maxAge, 0)
}

// result turns a 2xx response into the tool's result: JSON as the value
// (a JSON object also as structuredContent), text as a text block, images
// and audio as MCP image and audio content, anything else as an embedded
// resource; no body is null.
func result(u *url.URL, res *http.Response, body []byte) (*pipeline.Result, error) {
	meta := statusMeta(res.StatusCode)
	if res.StatusCode == http.StatusNoContent || len(body) == 0 {
		return &pipeline.Result{Value: nil, Meta: meta}, nil
	}
	mt := res.Header.Get("Content-Type")
	if mt != "application/json" { // the common case needs no parsing
		var err error
		if mt, _, err = mime.ParseMediaType(mt); err != nil {
			mt = http.DetectContentType(body)
			mt, _, _ = strings.Cut(mt, ";")
		}
	}
	switch {
	case isJSON(mt):
		if obj := bytes.TrimSpace(body); len(obj) > 0 && obj[0] == '{' {
			return objectResult(obj, meta)
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, upstream.Failed("upstream sent invalid JSON", err)
		}
		return &pipeline.Result{Value: v, Meta: meta}, nil
	case strings.HasPrefix(mt, "text/") || mt == "application/xml" || strings.HasSuffix(mt, "+xml"):
		return native(map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.ToValidUTF8(string(body), "\uFFFD")}}}, meta)
	case strings.HasPrefix(mt, "image/"), strings.HasPrefix(mt, "audio/"):
		kind, _, _ := strings.Cut(mt, "/")
		return native(map[string]any{"content": []any{map[string]any{
			"type": kind, "mimeType": mt, "data": base64.StdEncoding.EncodeToString(body),
		}}}, meta)
	default:
		return native(map[string]any{"content": []any{map[string]any{
			"type": "resource",
			"resource": map[string]any{
				"uri": resourceURI(u), "mimeType": mt, "blob": base64.StdEncoding.EncodeToString(body),
			},
		}}}, meta)
	}
}

// statusMeta is a result's _meta for an answer of status code: made once
// for each 2xx code (only those become results) and shared, so read only.
func statusMeta(code int) map[string]any {
	if code >= 200 && code <= 299 {
		return successMeta[code-200]
	}
	return map[string]any{"edgemcp/http": map[string]any{"status": code}}
}

var successMeta = func() (m [100]map[string]any) {
	for i := range m {
		m[i] = map[string]any{"edgemcp/http": map[string]any{"status": 200 + i}}
	}
	return m
}()

// resourceURI names a response by its URL without query or user info: a
// credential sent as a query key must not reach the model.
func resourceURI(u *url.URL) string {
	c := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return c.String()
}

// objectResult is the result of a JSON object answer: the object as the
// text block and as structuredContent, encoded once here as mcp-go encodes
// a CallToolResult (marked Canonical, so that the gateway writes these
// bytes instead of decoding and encoding the result again, which cost more
// CPU than the rest of a call's handling). The object is passed on as the
// upstream wrote it, compacted: its keys in their order, its numbers as
// written.
//
// mcp-go's encoder builds a map and walks the result's types on every
// call; the layout it writes is the same each time, so it is taken from
// mcp-go once (objectLayout) and each call fills in the two values,
// encoded by encoding/json as mcp-go's encoder encodes them
// (TestObjectResultIsCanonical, FuzzObjectResult hold the bytes equal).
func objectResult(obj []byte, meta map[string]any) (*pipeline.Result, error) {
	text, err := json.Marshal(string(obj))
	if err != nil {
		return nil, upstream.Failed("upstream response cannot be encoded", err)
	}
	structured, err := json.Marshal(json.RawMessage(obj))
	if err != nil { // encoding/json checks a RawMessage as it compacts it
		return nil, upstream.Failed("upstream sent invalid JSON", err)
	}
	return &pipeline.Result{Native: objectLayout.fill(text, structured), Canonical: true, Meta: meta}, nil
}

// resultLayout is mcp-go's encoding of a CallToolResult with one text
// block and structuredContent, cut where the text's and the object's
// encodings go: parts[0] first, parts[1] between, parts[2] last, the text
// first unless textLast.
type resultLayout struct {
	parts    [3][]byte
	textLast bool
}

var objectLayout = func() resultLayout {
	const textHole, objectHole = "edgemcp:text", `"edgemcp:object"`
	b, err := json.Marshal(mcp.CallToolResult{
		Content:              []mcp.Content{mcp.NewTextContent(textHole)},
		RawStructuredContent: json.RawMessage(objectHole),
	})
	t, o := bytes.Index(b, []byte(`"`+textHole+`"`)), bytes.Index(b, []byte(objectHole))
	if err != nil || t < 0 || o < 0 {
		panic(fmt.Sprintf("mcp-go's CallToolResult encoding has no place for the text and the object: %s %v", b, err))
	}
	tEnd, oEnd := t+len(textHole)+2, o+len(objectHole)
	if t < o {
		return resultLayout{parts: [3][]byte{b[:t], b[tEnd:o], b[oEnd:]}}
	}
	return resultLayout{parts: [3][]byte{b[:o], b[oEnd:t], b[tEnd:]}, textLast: true}
}()

func (l resultLayout) fill(text, object []byte) []byte {
	first, second := text, object
	if l.textLast {
		first, second = object, text
	}
	out := make([]byte, 0, len(l.parts[0])+len(first)+len(l.parts[1])+len(second)+len(l.parts[2]))
	out = append(out, l.parts[0]...)
	out = append(out, first...)
	out = append(out, l.parts[1]...)
	out = append(out, second...)
	return append(out, l.parts[2]...)
}

func native(v map[string]any, meta map[string]any) (*pipeline.Result, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, upstream.Failed("upstream response cannot be encoded", err)
	}
	return &pipeline.Result{Native: b, Meta: meta}, nil
}
