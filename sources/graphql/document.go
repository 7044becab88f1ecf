package graphql

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/edgemcp/edgemcp/pipeline"
)

// maxTokens bounds the parsing of a caller's query or selection.
const maxTokens = 20000

// request is one validated call, ready to send.
type request struct {
	Query         string         `json:"query"`
	Variables     map[string]any `json:"variables,omitempty"`
	OperationName string         `json:"operationName,omitempty"`

	kind ast.Operation // query or mutation, of the one operation sent
	// restore is the generated selection whose aliases the answer's
	// value is given back without (nil: nothing to restore).
	restore []*picked
}

// rootField is a root query or mutation field that is a tool.
type rootField struct {
	kind      ast.Operation
	field     *ast.FieldDefinition
	selection string    // generated; "" for a scalar or enum field
	restore   []*picked // the generated selection, when it has aliases to restore
	selectArg string    // the input that overrides it
}

// operationName names the documents the field tools send.
const operationName = "EdgemcpCall"

// document builds the operation for a call of the field's tool: every
// argument given is declared as a variable of its type and bound to its
// value (never written into the document); sel, when given, replaces the
// generated selection; the set arguments are bound (Fixed). The whole
// document is validated against the schema and the limits before
// anything is sent.
func (r *rootField) document(s *ast.Schema, limits Limits, fixed Fixed, call *pipeline.Call) (*request, error) {
	vars := map[string]any{}
	var sel string
	for name, v := range call.Inputs {
		if name == r.selectArg && r.selectArg != "" {
			str, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("input %q: want a string such as \"{ id name }\"", name)
			}
			sel = str
			continue
		}
		if r.field.Arguments.ForName(name) == nil || fixed.has(name) {
			return nil, fmt.Errorf("unknown input %q", name)
		}
		vars[name] = v
	}
	for _, a := range r.field.Arguments {
		if _, ok := vars[a.Name]; !ok && a.Type.NonNull && a.DefaultValue == nil && !fixed.has(a.Name) {
			return nil, fmt.Errorf("input %q: required", a.Name)
		}
	}
	text := r.operation(vars, sel == "")
	doc, err := parser.ParseQuery(&ast.Source{Name: "generated", Input: text})
	if err != nil {
		return nil, fmt.Errorf("generated operation: %v", err) // a bug: names come from the schema
	}
	label := "generated operation" // a bug if it fails: names come from the schema
	if sel != "" {
		set, err := parseSelection(sel)
		if err != nil {
			return nil, err
		}
		doc.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet = set
		label, text = "select", ""
	}
	req, err := seal(s, limits, fixed, call, doc, text, vars, label)
	if err == nil && sel == "" {
		req.restore = r.restore
	}
	return req, err
}

// operation is the text of the field's operation with the arguments in
// args declared and passed as variables, with the generated selection
// when generated.
func (r *rootField) operation(args map[string]any, generated bool) string {
	var decl, pass []string
	for _, a := range r.field.Arguments {
		if _, ok := args[a.Name]; ok {
			decl = append(decl, "$"+a.Name+": "+a.Type.String())
			pass = append(pass, a.Name+": $"+a.Name)
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
	if r.selection != "" && generated {
		b.WriteString(" " + r.selection)
	}
	b.WriteString(" }")
	return b.String()
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
// validated against the schema, mutations refused when they are off and
// subscriptions always (they need a stream) in every operation it holds,
// whichever runs, the operation chosen, the set arguments bound; what is
// sent is that operation alone with the fragments it spreads, printed
// from the checked form (seal), so that no upstream can run another.
func rawDocument(s *ast.Schema, limits Limits, mutations bool, fixed Fixed, call *pipeline.Call, query, opName string, vars map[string]any) (*request, error) {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Name: "query", Input: query}, maxTokens)
	if err != nil {
		return nil, fmt.Errorf("query: %s", gqlMessage(err))
	}
	if errs := fixed.validate(s, doc); len(errs) > 0 {
		return nil, fmt.Errorf("query: %s", listMessage(errs))
	}
	for _, op := range doc.Operations {
		if err := allowed(op, mutations); err != nil {
			return nil, err
		}
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
	for name := range vars {
		if op.VariableDefinitions.ForName(name) == nil {
			return nil, fmt.Errorf("variables: the operation declares no $%s", name)
		}
	}
	sent := map[string]any{}
	maps.Copy(sent, vars)
	return seal(s, limits, fixed, call, only(doc, op), "", sent, "query")
}

// allowed refuses subscriptions, and mutations when they are off.
func allowed(op *ast.OperationDefinition, mutations bool) error {
	switch {
	case op.Operation == ast.Subscription:
		return fmt.Errorf("query: subscriptions are not supported")
	case op.Operation == ast.Mutation && !mutations:
		return fmt.Errorf("query: mutations are off for this source")
	}
	return nil
}

// only is doc with op alone and the fragments it spreads (doc has passed
// validation: every spread names a fragment, and none spreads itself).
func only(doc *ast.QueryDocument, op *ast.OperationDefinition) *ast.QueryDocument {
	out := &ast.QueryDocument{Operations: ast.OperationList{op}}
	seen := map[string]bool{}
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch sel := sel.(type) {
			case *ast.Field:
				walk(sel.SelectionSet)
			case *ast.InlineFragment:
				walk(sel.SelectionSet)
			case *ast.FragmentSpread:
				if f := doc.Fragments.ForName(sel.Name); f != nil && !seen[sel.Name] {
					seen[sel.Name] = true
					out.Fragments = append(out.Fragments, f)
					walk(f.SelectionSet)
				}
			}
		}
	}
	walk(op.SelectionSet)
	return out
}

// seal makes a document that holds one operation (a field tool's, or
// the raw tool's after only) ready to send: the set arguments bound
// (Fixed.bind), the text printed from the parsed form when it changed or
// text is not the document as it stands, and what is sent validated
// against the schema, the limits and the variables; a printed text is
// parsed again first, so that what is checked is what the endpoint reads.
func seal(s *ast.Schema, limits Limits, fixed Fixed, call *pipeline.Call, doc *ast.QueryDocument, text string, vars map[string]any, label string) (*request, error) {
	changed := false
	if len(fixed.names) > 0 {
		// bind needs the fields' definitions, which validation sets.
		if errs := fixed.validate(s, doc); len(errs) > 0 {
			return nil, fmt.Errorf("%s: %s", label, listMessage(errs))
		}
		var err error
		if changed, err = fixed.bind(s, doc, doc.Operations[0], call, vars); err != nil {
			return nil, err
		}
	}
	if changed || text == "" {
		var out bytes.Buffer
		formatter.NewFormatter(&out, formatter.WithIndent(" ")).FormatQueryDocument(doc)
		text = out.String()
		var err error
		if doc, err = parser.ParseQueryWithTokenLimit(&ast.Source{Name: label, Input: text}, maxTokens); err != nil {
			return nil, fmt.Errorf("%s: %s", label, gqlMessage(err)) // a bug: the formatter printed it
		}
	}
	if len(doc.Operations) != 1 {
		return nil, fmt.Errorf("%s: want one operation, got %d", label, len(doc.Operations)) // a bug: see only
	}
	op := doc.Operations[0]
	if errs := validator.Validate(s, doc); len(errs) > 0 {
		return nil, fmt.Errorf("%s: %s", label, listMessage(errs))
	}
	if err := limits.Check(doc, op); err != nil {
		return nil, fmt.Errorf("%s: %v", label, err)
	}
	if err := checkVariables(s, op, vars); err != nil {
		return nil, err
	}
	return &request{Query: text, Variables: vars, OperationName: op.Name, kind: op.Operation}, nil
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
