package openapi

import (
	"fmt"
	"regexp"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// fixedValue is a parameter the operator fixes with `set <param> <value>`
// (README, Sources: OpenAPI): a literal, or a value of the verified caller
// ({{ auth.subject }}, {{ auth.claims.NAME }}). The parameter is not an
// input: no argument can set or change it.
type fixedValue struct {
	literal  string
	identity string // "auth.subject" or "auth.claims.a.b"; "" for a literal
}

var identityValue = regexp.MustCompile(`^\{\{\s*(auth\.subject|auth\.claims\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\s*\}\}$`)

// parseFixed reads the value of a `set` line.
func parseFixed(text string) (fixedValue, error) {
	if m := identityValue.FindStringSubmatch(text); m != nil {
		return fixedValue{identity: m[1]}, nil
	}
	if len(text) >= 2 && text[0] == '{' && text[1] == '{' {
		return fixedValue{}, fmt.Errorf("%q: want a literal, {{ auth.subject }} or {{ auth.claims.NAME }}", text)
	}
	return fixedValue{literal: text}, nil
}

// value is the parameter's value for a call; a caller without the
// identity value fails the call in its authentication stage.
func (f fixedValue) value(call *pipeline.Call) (any, error) {
	if f.identity == "" {
		return f.literal, nil
	}
	id := pipeline.TemplateIdentity(call.Identity)
	v, ok := id.Lookup(f.identity)
	if !ok {
		err := &sqltemplate.MissingIdentityError{Name: f.identity}
		return nil, pipeline.Fail(pipeline.StageAuth, err, "%s", err.Error())
	}
	return v, nil
}
