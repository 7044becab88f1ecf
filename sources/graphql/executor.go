package graphql

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// Defaults of an Executor.
const (
	DefaultMaxResponseSize = 8 << 20 // bytes
	DefaultTimeout         = 30 * time.Second
)

// Executor sends a source's validated documents to its endpoint with the
// credentials, retries (queries only) and breaker, and reads the answers.
type Executor struct {
	Endpoint    string
	Client      *http.Client
	Credentials []upstream.Credential
	Retry       upstream.Retry
	Breaker     *upstream.Breaker // nil: none
	// MaxResponseSize bounds the response body read (max_response_size).
	MaxResponseSize int64
	// Timeout bounds the whole call, retries and response body included.
	Timeout time.Duration
}

// response is a GraphQL answer.
type response struct {
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

// gqlError is one entry of an answer's errors, as much of it as the
// caller is shown: extensions may hold server internals and are dropped.
type gqlError struct {
	Message string `json:"message"`
	Path    []any  `json:"path,omitempty"`
}

// Bounds of the errors a caller sees.
const (
	maxErrors       = 10
	maxErrorMessage = 300
)

// send posts r and returns the answer of a 2xx response. Queries may be
// retried (they change nothing, though sent as POST); mutations never are.
func (x *Executor) send(ctx context.Context, call *pipeline.Call, r *request) (*response, int, error) {
	timeout := x.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := json.Marshal(r)
	if err != nil {
		return nil, 0, pipeline.Fail(pipeline.StageValidation, err, "variables cannot be encoded: %v", err)
	}
	req, err := newRequest(ctx, x.Endpoint, body)
	if err != nil {
		return nil, 0, upstream.Failed("bad endpoint", err)
	}
	for _, c := range x.Credentials {
		if err := c.Apply(ctx, req, call); err != nil {
			return nil, 0, err
		}
	}
	retry := x.Retry
	retry.Safe = r.kind == ast.Query
	if r.kind != ast.Query {
		retry.Attempts = 0
	}
	res, err := retry.Send(ctx, x.Client, req, x.Breaker)
	if err != nil {
		return nil, 0, err
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return nil, res.StatusCode, upstream.NewStatusError(res, upstream.Secrets(req, x.Credentials)...)
	}
	max := x.MaxResponseSize
	if max <= 0 {
		max = DefaultMaxResponseSize
	}
	raw, err := upstream.ReadBody(res, max)
	if err != nil {
		return nil, res.StatusCode, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out response
	if err := dec.Decode(&out); err != nil {
		return nil, res.StatusCode, upstream.Failed("upstream sent invalid JSON", err)
	}
	return &out, res.StatusCode, nil
}

// result turns an answer into the tool's result (docs/graphql-source.md,
// Results). Errors without data fail the call (-32000) with their
// messages, and so do errors beside a null root field, for a field tool:
// it has nothing else to give. Otherwise the value is the root field's
// (key "" for the raw tool: the whole data), its aliased fields given
// back their names (restore): an object as structuredContent, anything
// else as the result's value. Partial data (data and errors) is a result
// whose structuredContent is {"data": value, "errors": [...]}.
func result(resp *response, status int, key string, sel []*picked) (*pipeline.Result, error) {
	meta := map[string]any{"edgemcp/http": map[string]any{"status": status}}
	data := bytes.TrimSpace(resp.Data)
	noData := len(data) == 0 || bytes.Equal(data, []byte("null"))
	var value any
	if !noData {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			return nil, upstream.Failed("upstream sent data that is not an object", err)
		}
		value = any(obj)
		if key != "" {
			value = obj[key]
			noData = value == nil
		}
	}
	if noData && len(resp.Errors) > 0 {
		return nil, upstream.Failed("upstream GraphQL errors: "+errorMessages(resp.Errors), nil)
	}
	if sel != nil {
		restore(value, sel)
	}
	if len(resp.Errors) > 0 {
		return native(map[string]any{"data": value, "errors": boundErrors(resp.Errors)}, meta)
	}
	if obj, ok := value.(map[string]any); ok {
		return native(obj, meta)
	}
	return &pipeline.Result{Value: value, Meta: meta}, nil
}

func native(structured map[string]any, meta map[string]any) (*pipeline.Result, error) {
	text, err := json.Marshal(structured)
	if err != nil {
		return nil, upstream.Failed("upstream response cannot be encoded", err)
	}
	b, err := json.Marshal(map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": string(text)}},
		"structuredContent": structured,
	})
	if err != nil {
		return nil, upstream.Failed("upstream response cannot be encoded", err)
	}
	return &pipeline.Result{Native: b, Meta: meta}, nil
}

// boundErrors keeps the first maxErrors errors, their messages cut.
func boundErrors(errs []gqlError) []gqlError {
	out := make([]gqlError, 0, min(len(errs), maxErrors))
	for i, e := range errs {
		if i == maxErrors {
			break
		}
		e.Message = cut(e.Message)
		out = append(out, e)
	}
	return out
}

// errorMessages is the errors' messages on one line, bounded.
func errorMessages(errs []gqlError) string {
	const show = 5
	msgs := make([]string, 0, show+1)
	for i, e := range errs {
		if i == show {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(errs)-show))
			break
		}
		m := cut(e.Message)
		if len(e.Path) > 0 {
			parts := make([]string, len(e.Path))
			for j, p := range e.Path {
				parts[j] = fmt.Sprint(p)
			}
			m += " (at " + strings.Join(parts, ".") + ")"
		}
		msgs = append(msgs, m)
	}
	return strings.Join(msgs, "; ")
}

func cut(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if r := []rune(s); len(r) > maxErrorMessage {
		return string(r[:maxErrorMessage]) + "…"
	}
	return s
}
