package graphql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Config is how a schema's root fields become tools.
type Config struct {
	// Namespace starts every tool name (usually the source's name).
	Namespace string
	// Mutations makes a tool of each mutation field and lets the raw
	// query tool send mutations.
	Mutations bool
	// Depth is how deep generated selection sets reach (default DefaultDepth).
	Depth int
	// Limits bound every document sent, generated or the caller's.
	Limits Limits
	// Executor sends the documents; shared by the source's tools.
	Executor *Executor
	// Fixed are the source's `set` arguments, held on every document.
	Fixed Fixed
}

// Tools returns one tool per root query field, one per mutation field
// when cfg.Mutations, and the raw query tool <namespace>_query.
func Tools(s *ast.Schema, cfg Config) ([]*pipeline.Tool, error) {
	if cfg.Depth <= 0 {
		cfg.Depth = DefaultDepth
	}
	cfg.Limits = cfg.Limits.withDefaults()
	taken := map[string]bool{}
	raw := rawTool(s, cfg)
	taken[raw.Name] = true
	var tools []*pipeline.Tool
	roots := []*ast.Definition{s.Query}
	if cfg.Mutations && s.Mutation != nil {
		roots = append(roots, s.Mutation)
	}
	for _, root := range roots {
		kind := ast.Query
		if root == s.Mutation && s.Mutation != s.Query {
			kind = ast.Mutation
		}
		for _, f := range root.Fields {
			if len(f.Name) > 1 && f.Name[:2] == "__" {
				continue
			}
			name := pipeline.ToolName(cfg.Namespace, f.Name)
			if taken[name] {
				// A field named like the raw tool, or a mutation named like
				// a query: the kind tells them apart.
				name = pipeline.ToolName(cfg.Namespace, f.Name+"_"+string(kind))
			}
			if taken[name] {
				return nil, fmt.Errorf("%s field %s: tool name %s is taken", kind, f.Name, name)
			}
			taken[name] = true
			t, err := fieldTool(s, cfg, kind, f, name)
			if err != nil {
				return nil, fmt.Errorf("%s field %s: %v", kind, f.Name, err)
			}
			tools = append(tools, t)
		}
	}
	return append(tools, raw), nil
}

func fieldTool(s *ast.Schema, cfg Config, kind ast.Operation, f *ast.FieldDefinition, name string) (*pipeline.Tool, error) {
	gen := generate(s, f.Type, cfg.Depth, cfg.Limits)
	rf := &rootField{kind: kind, field: f, selection: render(gen)}
	if aliased(gen) {
		rf.restore = gen
	}
	if rf.selection != "" {
		rf.selectArg = "select"
		for f.Arguments.ForName(rf.selectArg) != nil {
			rf.selectArg = "_" + rf.selectArg
		}
	}
	in, err := json.Marshal(inputSchema(s, f, rf.selectArg, cfg.Fixed))
	if err != nil {
		return nil, err
	}
	desc := f.Description
	if desc != "" {
		desc += "\n\n"
	}
	desc += fmt.Sprintf("GraphQL %s field %s, returning %s.", kind, f.Name, f.Type.String())
	if rf.selection != "" {
		desc += " Selected by default: " + rf.selection
	}
	t, fl := true, false
	ann := pipeline.Annotations{OpenWorld: &t}
	if kind == ast.Query {
		ann.ReadOnly, ann.Idempotent = &t, &t
	} else {
		ann.ReadOnly = &fl
	}
	x := cfg.Executor
	return &pipeline.Tool{
		Name:         name,
		Original:     f.Name,
		Description:  desc,
		InputSchema:  in,
		Aliases:      []string{cfg.Namespace + "." + f.Name},
		Annotations:  ann,
		Source:       cfg.Namespace,
		FromIdentity: cfg.Fixed.fromIdentity(s),
		Executor: pipeline.ExecutorFunc(func(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
			req, err := rf.document(s, cfg.Limits, cfg.Fixed, call)
			if err != nil {
				return nil, refused(err)
			}
			resp, status, err := x.send(ctx, call, req)
			if err != nil {
				return nil, err
			}
			return result(resp, status, f.Name, req.restore)
		}),
	}, nil
}

// rawTool is <namespace>_query: a caller's own document, validated against
// the schema and the limits before it is sent.
func rawTool(s *ast.Schema, cfg Config) *pipeline.Tool {
	return newRawTool(cfg, cfg.Mutations && s.Mutation != nil, s, func() (*ast.Schema, error) { return s, nil })
}

// newRawTool is the raw tool over the schema schema() returns, which may
// arrive after the tool is made (a schema loaded in the background; known
// is nil until then).
func newRawTool(cfg Config, mutations bool, known *ast.Schema, schema func() (*ast.Schema, error)) *pipeline.Tool {
	what := "a GraphQL query"
	if mutations {
		what = "a GraphQL query or mutation"
	}
	var fixed string
	if names := cfg.Fixed.names; len(names) > 0 {
		fixed = fmt.Sprintf(" The gateway sets the argument %s of every field that takes it: leave it out.", strings.Join(names, ", "))
	}
	in := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query":         map[string]any{"type": "string", "description": "The document: " + what + "; validated against the schema before it is sent."},
			"variables":     map[string]any{"type": "object", "description": "Values of the document's variables."},
			"operationName": map[string]any{"type": "string", "description": "The operation to run when the document holds several."},
		},
		"required":             []string{"query"},
		"additionalProperties": false,
	}
	inSchema, _ := json.Marshal(in)
	t, fl := true, false
	ann := pipeline.Annotations{OpenWorld: &t, ReadOnly: &t}
	if mutations {
		ann.ReadOnly = &fl
	}
	x := cfg.Executor
	return &pipeline.Tool{
		Name:     pipeline.ToolName(cfg.Namespace, "query"),
		Original: "query",
		Description: fmt.Sprintf("Runs %s against the %s schema (at most %d fields, nested at most %d deep).%s",
			what, cfg.Namespace, cfg.Limits.MaxFields, cfg.Limits.MaxDepth, fixed),
		InputSchema:  inSchema,
		Aliases:      []string{cfg.Namespace + ".query"},
		Annotations:  ann,
		Source:       cfg.Namespace,
		FromIdentity: cfg.Fixed.fromIdentity(known),
		Executor: pipeline.ExecutorFunc(func(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
			s, err := schema()
			if err != nil {
				return nil, err
			}
			req, err := rawCall(s, cfg.Limits, mutations, cfg.Fixed, call)
			if err != nil {
				return nil, refused(err)
			}
			resp, status, err := x.send(ctx, call, req)
			if err != nil {
				return nil, err
			}
			return result(resp, status, "", nil)
		}),
	}
}

// refused is a document that is not sent: an input validation failure,
// or the failure a stage reported (a caller without the identity value a
// `set` takes fails authentication).
func refused(err error) error {
	var pe *pipeline.Error
	if errors.As(err, &pe) {
		return pe
	}
	return pipeline.Fail(pipeline.StageValidation, err, "%s", err.Error())
}

// rawCall reads the raw tool's inputs and checks the document.
func rawCall(s *ast.Schema, limits Limits, mutations bool, fixed Fixed, call *pipeline.Call) (*request, error) {
	var query, opName string
	var vars map[string]any
	for k, v := range call.Inputs {
		var ok bool
		want := "a string"
		switch k {
		case "query":
			query, ok = v.(string)
		case "operationName":
			opName, ok = v.(string)
			ok = ok || v == nil
		case "variables":
			vars, ok = v.(map[string]any)
			ok, want = ok || v == nil, "an object"
		default:
			return nil, fmt.Errorf("unknown input %q", k)
		}
		if !ok {
			return nil, fmt.Errorf("input %q: want %s", k, want)
		}
	}
	if query == "" {
		return nil, fmt.Errorf("input \"query\": required")
	}
	return rawDocument(s, limits, mutations, fixed, call, query, opName, vars)
}
