package graphql

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// maxTokens bounds the parsing of a caller's query or selection.
const maxTokens = 20000

// request is one validated call, ready to send.
type request struct {
	Query         string         `json:"query"`
	Variables     map[string]any `json:"variables,omitempty"`
	OperationName string         `json:"operationName,omitempty"`

	kind ast.Operation // query or mutation
}

// rootField is a root query or mutation field that is a tool.
type rootField struct {
	kind      ast.Operation
	field     *ast.FieldDefinition
	selection string // generated; "" for a scalar or enum field
	selectArg string // the input that overrides it
}

// operationName names the documents the field tools send.
const operationName = "EdgemcpCall"

// document builds the operation for a call of the field's tool: every
// argument given is declared as a variable of its type and bound to its
// value (never written into the document); sel, when given, replaces the
// generated selection. The whole document is validated against the
// schema and the limits before anything is sent.
func (r *rootField) document(s *ast.Schema, limits Limits, inputs map[string]any) (*request, error) {
	vars := map[string]any{}
	var sel string
	for name, v := range inputs {
		if name == r.selectArg && r.selectArg != "" {
			str, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("input %q: want a string such as \"{ id name }\"", name)
			}
			sel = str
			continue
		}
		if r.field.Arguments.ForName(name) == nil {
			return nil, fmt.Errorf("unknown input %q", name)
		}
		vars[name] = v
	}
	var decl, pass []string
	for _, a := range r.field.Arguments {
		if _, ok := vars[a.Name]; ok {
			decl = append(decl, "$"+a.Name+": "+a.Type.String())
			pass = append(pass, a.Name+": $"+a.Name)
		} else if a.Type.NonNull && a.DefaultValue == nil {
			return nil, fmt.Errorf("input %q: required", a.Name)
		}
	}
	var b strings.Builder
	b.WriteString(string(r.kind) + " " + operationName)
	if len(decl) > 0 {
		b.WriteString("(" + strings.Join(decl, ", ") + ")")
	}
	b.WriteString(" { " + r.field.Name)
	if len(pass) > 0 {
		b.WriteString("(" + strings.Join(pass, ", ") + ")")
	}
	if r.selection != "" && sel == "" {
		b.WriteString(" " + r.selection)
	}
	b.WriteString(" }")
	doc, err := parser.ParseQuery(&ast.Source{Name: "generated", Input: b.String()})
	if err != nil {
		return nil, fmt.Errorf("generated operation: %v", err) // a bug: names come from the schema
	}
	text := b.String()
	if sel != "" {
		set, err := parseSelection(sel)
		if err != nil {
			return nil, err
		}
		doc.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet = set
		var out bytes.Buffer
		formatter.NewFormatter(&out, formatter.WithIndent(" ")).FormatQueryDocument(doc)
		text = out.String()
	}
	label := "generated operation" // a bug if it fails: names come from the schema
	if sel != "" {
		label = "select"
	}
	if err := check(s, limits, doc, doc.Operations[0], label); err != nil {
		return nil, err
	}
	if err := checkVariables(s, doc.Operations[0], vars); err != nil {
		return nil, err
	}
	return &request{Query: text, Variables: vars, OperationName: operationName, kind: r.kind}, nil
}

// parseSelection reads a `select` input: one selection set alone, such as
// "{ id owner { login } }", with no operation, variable or fragment of its
// own.
func parseSelection(sel string) (ast.SelectionSet, error) {
	if !strings.HasPrefix(strings.TrimSpace(sel), "{") {
		return nil, fmt.Errorf("select: want a selection set such as \"{ id name }\"")
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Name: "select", Input: sel}, maxTokens)
	if err != nil {
		return nil, fmt.Errorf("select: %s", gqlMessage(err))
	}
	if len(doc.Operations) != 1 || len(doc.Fragments) != 0 {
		return nil, fmt.Errorf("select: want one selection set, no operations or fragments")
	}
	return doc.Operations[0].SelectionSet, nil
}

// rawDocument checks a caller's document for the raw query tool: parsed,
// validated against the schema, the operation chosen, mutations refused
// when they are off and subscriptions always (they need a stream), the
// limits kept and the variables checked. The text sent is the caller's.
func rawDocument(s *ast.Schema, limits Limits, mutations bool, query, opName string, vars map[string]any) (*request, error) {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Name: "query", Input: query}, maxTokens)
	if err != nil {
		return nil, fmt.Errorf("query: %s", gqlMessage(err))
	}
	if errs := validator.Validate(s, doc); len(errs) > 0 {
		return nil, fmt.Errorf("query: %s", listMessage(errs))
	}
	var op *ast.OperationDefinition
	switch {
	case opName != "":
		if op = doc.Operations.ForName(opName); op == nil {
			return nil, fmt.Errorf("operationName: the query has no operation %q", opName)
		}
	case len(doc.Operations) == 1:
		op = doc.Operations[0]
	default:
		return nil, fmt.Errorf("operationName: the query has %d operations; name the one to run", len(doc.Operations))
	}
	switch {
	case op.Operation == ast.Subscription:
		return nil, fmt.Errorf("query: subscriptions are not supported")
	case op.Operation == ast.Mutation && !mutations:
		return nil, fmt.Errorf("query: mutations are off for this source")
	}
	if err := limits.Check(doc, op); err != nil {
		return nil, fmt.Errorf("query: %v", err)
	}
	for name := range vars {
		if op.VariableDefinitions.ForName(name) == nil {
			return nil, fmt.Errorf("variables: the operation declares no $%s", name)
		}
	}
	if err := checkVariables(s, op, vars); err != nil {
		return nil, err
	}
	return &request{Query: query, Variables: vars, OperationName: opName, kind: op.Operation}, nil
}

// check validates a document against the schema and the limits.
func check(s *ast.Schema, limits Limits, doc *ast.QueryDocument, op *ast.OperationDefinition, label string) error {
	if errs := validator.Validate(s, doc); len(errs) > 0 {
		return fmt.Errorf("%s: %s", label, listMessage(errs))
	}
	if err := limits.Check(doc, op); err != nil {
		return fmt.Errorf("%s: %v", label, err)
	}
	return nil
}

// checkVariables validates values against the operation's variable
// types (gqlparser coerces in place, so it works on a copy).
func checkVariables(s *ast.Schema, op *ast.OperationDefinition, vars map[string]any) error {
	copied, err := deepCopy(vars)
	if err != nil {
		return fmt.Errorf("variables: %v", err)
	}
	if _, err := validator.VariableValues(s, op, copied); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(gqlMessage(err), "input: "))
	}
	return nil
}

func deepCopy(m map[string]any) (map[string]any, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	out := map[string]any{}
	return out, dec.Decode(&out)
}

// gqlMessage is a gqlparser error as one line, with its position.
func gqlMessage(err error) string {
	var ge *gqlerror.Error
	if errors.As(err, &ge) {
		return ge.Error()
	}
	return err.Error()
}

// listMessage is the first few errors of a list.
func listMessage(errs gqlerror.List) string {
	const show = 3
	msgs := make([]string, 0, show)
	for i, e := range errs {
		if i == show {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(errs)-show))
			break
		}
		msgs = append(msgs, e.Error())
	}
	return strings.Join(msgs, "; ")
}
