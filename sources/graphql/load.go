package graphql

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/edgemcp/edgemcp/sources/upstream"
)

// Defaults for reading a schema.
const (
	DefaultMaxSchemaSize = 32 << 20 // bytes, of an SDL file or an introspection answer
	DefaultLoadTimeout   = 30 * time.Second
)

// LoadSDL reads and validates the schema in an SDL file. A field or enum
// value defined again alike is kept once, with a warning (keepFirst).
func LoadSDL(path string, maxSize int64) (*ast.Schema, []string, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxSchemaSize
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("schema %s: %v", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSize+1))
	if err != nil {
		return nil, nil, fmt.Errorf("schema %s: %v", path, err)
	}
	if int64(len(b)) > maxSize {
		return nil, nil, fmt.Errorf("schema %s: larger than %d bytes", path, maxSize)
	}
	sd, err := parser.ParseSchemas(validator.Prelude, &ast.Source{Name: path, Input: string(b)})
	if err != nil {
		return nil, nil, fmt.Errorf("schema %s: %v", path, err)
	}
	warnings, err := keepFirst(sd)
	if err != nil {
		return nil, nil, fmt.Errorf("schema %s: %v", path, err)
	}
	s, err := validator.ValidateSchemaDocument(sd)
	if err != nil {
		return nil, nil, fmt.Errorf("schema %s: %v", path, err)
	}
	if s.Query == nil {
		return nil, nil, fmt.Errorf("schema %s: no query type", path)
	}
	return s, warnings, nil
}

func parseSchema(name, sdl string) (*ast.Schema, error) {
	s, err := gqlparser.LoadSchema(&ast.Source{Name: name, Input: sdl})
	if err != nil {
		return nil, fmt.Errorf("schema %s: %v", name, err)
	}
	if s.Query == nil {
		return nil, fmt.Errorf("schema %s: no query type", name)
	}
	return s, nil
}

// Introspector asks an endpoint for its schema.
type Introspector struct {
	Endpoint    string
	Client      *http.Client
	Credentials []upstream.Credential
	// Timeout bounds the whole exchange (default DefaultLoadTimeout).
	Timeout time.Duration
	// MaxSize bounds the answer (default DefaultMaxSchemaSize).
	MaxSize int64
}

// Introspect sends the introspection query with the source's credentials
// and returns the schema the answer describes, validated like an SDL file.
func (in Introspector) Introspect(ctx context.Context) (*ast.Schema, error) {
	timeout, max := in.Timeout, in.MaxSize
	if timeout <= 0 {
		timeout = DefaultLoadTimeout
	}
	if max <= 0 {
		max = DefaultMaxSchemaSize
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"query": introspectionQuery, "operationName": "EdgemcpIntrospection"})
	req, err := newRequest(ctx, in.Endpoint, body)
	if err != nil {
		return nil, err
	}
	for _, c := range in.Credentials {
		if err := c.Apply(ctx, req, nil); err != nil {
			return nil, fmt.Errorf("introspection: %v", err)
		}
	}
	res, err := in.Client.Do(req)
	if err != nil {
		// Not the *url.Error: its URL may hold an api_key query credential.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &unreachableError{fmt.Errorf("introspection: %v", err)}
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return nil, &unreachableError{fmt.Errorf("introspection: %v", upstream.NewStatusError(res, upstream.Secrets(req, in.Credentials)...))}
	}
	raw, err := upstream.ReadBody(res, max)
	if err != nil {
		return nil, &unreachableError{fmt.Errorf("introspection: %v", err)}
	}
	var resp struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, fmt.Errorf("introspection: the answer is not JSON: %v", err)
	}
	if len(resp.Errors) > 0 {
		return nil, fmt.Errorf("introspection refused: %s (is introspection disabled? use `schema <file>`)", errorMessages(resp.Errors))
	}
	if len(bytes.TrimSpace(resp.Data)) == 0 || bytes.Equal(bytes.TrimSpace(resp.Data), []byte("null")) {
		return nil, fmt.Errorf("introspection: the answer has no data")
	}
	sdl, err := sdlFromIntrospection(resp.Data)
	if err != nil {
		return nil, err
	}
	return parseSchema(in.Endpoint+" (introspection)", sdl)
}

// unreachableError is an introspection that got no answer (no connection,
// an HTTP error, a cut body), which a later try may get; an answer that
// refuses introspection or describes a bad schema is final.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

// newRequest is a GraphQL-over-HTTP POST of body.
func newRequest(ctx context.Context, endpoint string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("endpoint: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/graphql-response+json, application/json")
	return req, nil
}
