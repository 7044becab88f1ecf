package openapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// validate checks the document as kin-openapi does, and sorts what it
// finds by what it changes. A problem inside an operation that changes
// how its calls are made (a parameter without a name, a schema of an
// unknown type) leaves that operation out (doc.invalid); a problem that
// changes no call (a stray sibling field, an example without a value, a
// parameter declared twice, anything outside the paths) is only noted
// (doc.Findings). One bad operation thus never stops the others. With
// strict, any finding fails the load.
//
// Examples, defaults and patterns are not checked at all (they do not
// change a call; patterns are made to compile for clients by ecmaPattern),
// nor, but with strict, responses and components: what they could be
// found to lack changes no call, and their schemas are most of what a
// large document holds. kin-openapi validates a schema again at each use,
// so Microsoft Graph's shared response schemas made its validation take a
// minute; its operations' parameters and bodies take seconds.
// Each operation is validated alone, with its path item's parameters, so
// two path templates that differ only in their variables' names ("/a/{id}"
// and "/a/{name}", as in GitHub's document) do not conflict: that breaks a
// MUST of the specification, but only confuses a server routing requests,
// not a client filling them in.
func validate(ctx context.Context, doc *Document, strict bool) error {
	opts := []openapi3.ValidationOption{
		openapi3.DisableExamplesValidation(), openapi3.DisableSchemaDefaultsValidation(),
		openapi3.DisableSchemaPatternValidation(), openapi3.EnableMultiError(),
	}
	if doc.IsOpenAPI31OrLater() {
		opts = append(opts, openapi3.IsOpenAPI31OrLater())
	}
	if doc.IsOpenAPI32OrLater() {
		opts = append(opts, openapi3.IsOpenAPI32OrLater())
	}
	paths, components := doc.Paths, doc.Components
	doc.Paths = openapi3.NewPaths()
	if !strict {
		doc.Components = nil
	}
	err := guarded(func() error { return doc.T.Validate(ctx, opts...) })
	doc.Paths, doc.Components = paths, components
	for _, e := range leaves(err) {
		doc.Findings = append(doc.Findings, firstLine(e))
	}
	if paths != nil {
		for _, p := range paths.Keys() {
			item := paths.Value(p)
			if item == nil {
				continue
			}
			for _, m := range methods {
				op := item.GetOperation(m)
				if op == nil {
					continue
				}
				one := &openapi3.PathItem{Parameters: item.Parameters}
				if !strict {
					calls := *op
					calls.Responses = noResponses
					op = &calls
				}
				one.SetOperation(m, op)
				at := sentTemplate(p, item, op)
				err := guarded(func() error { return openapi3.NewPaths(openapi3.WithPath(at, one)).Validate(ctx, opts...) })
				prefix := fmt.Sprintf("invalid path %s: invalid operation %s: ", at, m)
				for _, e := range leaves(err) {
					msg := strings.TrimPrefix(firstLine(e), prefix)
					if changesNoCall(e) {
						doc.Findings = append(doc.Findings, m+" "+p+": "+msg)
						continue
					}
					if doc.invalid == nil {
						doc.invalid = map[opKey]string{}
					}
					if _, seen := doc.invalid[opKey{m, p}]; !seen {
						doc.invalid[opKey{m, p}] = msg
					}
				}
			}
		}
	}
	if !strict {
		return nil
	}
	if paths != nil {
		for _, p := range paths.Keys() {
			for _, m := range methods {
				if why, ok := doc.invalid[opKey{m, p}]; ok {
					return fmt.Errorf("%s %s: %s", m, p, why)
				}
			}
		}
	}
	if len(doc.Findings) > 0 {
		return errors.New(doc.Findings[0])
	}
	return nil
}

// noResponses stands for an operation's responses where they are not
// validated: one valid response.
var noResponses = openapi3.NewResponses(openapi3.WithStatus(200, &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription("not validated")}))

// sentTemplate is the part of a path template that is sent (splitTemplate),
// the template's own query but for the pairs its declared query
// parameters send: kin-openapi reads every variable of a template as a
// path parameter.
func sentTemplate(p string, item *openapi3.PathItem, op *openapi3.Operation) string {
	target, query := splitTemplate(p)
	query = templateQuery(query, func(name string) bool { return declaresQuery(name, item.Parameters, op.Parameters) })
	if query != "" {
		target += "?" + query
	}
	return target
}

// guarded runs a validation, turning a panic of a validator (kin-openapi
// warns that some may dereference nil past a failure) into an error: a
// document read by a refresh is validated in a goroutine of its own.
func guarded(validate func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the validator failed: %v", r)
		}
	}()
	return validate()
}

// leaves are the independent problems of a validation error.
func leaves(err error) []error {
	if err == nil {
		return nil
	}
	var me openapi3.MultiError
	if errors.As(err, &me) {
		return me
	}
	return []error{err}
}

func firstLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}

// changesNoCall reports whether a problem leaves the calls of its
// operation as they would be without it: fields the gateway does not read
// (examples, links, response descriptions, documentation), a field of
// another OpenAPI version (decoded all the same), a parameter declared
// twice (the later declaration is used), an array without items (any item).
func changesNoCall(err error) bool {
	for _, target := range []any{
		new(*openapi3.ExtraSiblingFieldsError),
		new(*openapi3.FieldVersionMismatchError),
		new(*openapi3.DuplicateParameterError),
		new(*openapi3.DuplicateRequiredFieldError),
		new(*openapi3.SchemaItemsRequired),
		new(*openapi3.SchemaPatternRegexError),
		new(*openapi3.SchemaReadOnlyWriteOnlyExclusive),
		new(*openapi3.ExampleValueOrExternalValueRequired),
		new(*openapi3.ExampleValueExternalValueExclusive),
		new(*openapi3.MediaTypeExampleExamplesExclusive),
		new(*openapi3.ParameterExampleAndExamplesExclusive),
		new(*openapi3.ExampleViolatesSchema),
		new(*openapi3.DefaultViolatesSchema),
		new(*openapi3.ExternalDocsURLRequired),
		new(*openapi3.LinkOperationIDOrRefRequired),
		new(*openapi3.LinkOperationIDRefExclusive),
		new(*openapi3.ResponseDescriptionRequired),
		new(*openapi3.OperationResponsesRequired),
		new(*openapi3.ResponsesNonEmptyRequired),
		new(*openapi3.RequestBodyContentRequired),
		new(*openapi3.SecurityRequirementSchemeUndefinedError),
	} {
		if errors.As(err, target) {
			return true
		}
	}
	return false
}
