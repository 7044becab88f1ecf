package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// Fixed is a value the operator fixes with `set <name> <value>` (README,
// Sources): a literal, or a value of the verified caller ({{ auth.subject }},
// {{ auth.claims.NAME }}). What it fixes is not an input: no argument can
// set or change it.
type Fixed struct {
	literal  string
	identity string // "auth.subject" or "auth.claims.a.b"; "" for a literal
	omitted  bool   // Omitted: no value is sent
}

// Omitted fixes an argument to being absent: it leaves the schema, no
// caller can send it, and the upstream gets none (its own default applies).
// An override's `hide <tool> <arg>` without a set line is one.
var Omitted = Fixed{omitted: true}

var identityValue = regexp.MustCompile(`^\{\{\s*(auth\.subject|auth\.claims\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\s*\}\}$`)

// ParseFixed reads the value of a `set` line.
func ParseFixed(text string) (Fixed, error) {
	if m := identityValue.FindStringSubmatch(text); m != nil {
		return Fixed{identity: m[1]}, nil
	}
	if len(text) >= 2 && text[0] == '{' && text[1] == '{' {
		return Fixed{}, fmt.Errorf("%q: want a literal, {{ auth.subject }} or {{ auth.claims.NAME }}", text)
	}
	return Fixed{literal: text}, nil
}

// Identity names the caller's value it takes ("" for a literal).
func (f Fixed) Identity() string { return f.identity }

// Value is the value for a call; a caller without the identity value
// fails the call in its authentication stage.
func (f Fixed) Value(call *pipeline.Call) (any, error) {
	if f.identity == "" {
		return f.literal, nil
	}
	v, ok := pipeline.TemplateIdentity(call.Identity).Lookup(f.identity)
	if !ok {
		err := &sqltemplate.MissingIdentityError{Name: f.identity}
		return nil, pipeline.Fail(pipeline.StageAuth, err, "%s", err.Error())
	}
	return v, nil
}

// FixedArgs are `set` lines over a source whose tools send their arguments
// upstream as one object (GraphQL variables, an MCP server's arguments).
type FixedArgs map[string]Fixed

// NamesFromArguments is implemented by an executor whose arguments can put
// names of their own on the wire (an OpenAPI operation: an exploded
// object's keys become query parameters, a raw Cookie header its cookies).
// FixedArgs cannot guard such a tool: a caller could send a fixed name
// inside another argument. Its source fixes parameters itself (`set`).
type NamesFromArguments interface {
	ArgumentsMakeNames()
}

// ParseFixedArgs reads a source's `set` lines.
func ParseFixedArgs(set map[string]string) (FixedArgs, error) {
	out := make(FixedArgs, len(set))
	for name, text := range set {
		f, err := ParseFixed(text)
		if err != nil {
			return nil, fmt.Errorf("set %s: %v", name, err)
		}
		out[name] = f
	}
	return out, nil
}

// Apply fixes the arguments of t that its input schema declares: they
// leave the schema (properties and required), a caller's argument of that
// name is refused as unknown, and each call sends the fixed value. A tool
// declaring none is returned as it is.
func (f FixedArgs) Apply(t *pipeline.Tool) (*pipeline.Tool, error) { return f.apply(t, false) }

// ApplyEverywhere is Apply for a source whose schemas need not list what a
// tool takes (an MCP server's: `{"type":"object"}`, a `$ref`, an `allOf`
// forward any argument): a caller's argument of any fixed name is refused
// on every tool, whatever its schema says, and each fixed value is sent to
// every tool whose schema does not refuse it (a top level closed with
// additionalProperties false that does not list the name).
func (f FixedArgs) ApplyEverywhere(t *pipeline.Tool) (*pipeline.Tool, error) { return f.apply(t, true) }

func (f FixedArgs) apply(t *pipeline.Tool, everywhere bool) (*pipeline.Tool, error) {
	if len(f) == 0 {
		return t, nil
	}
	var schema map[string]any
	if err := json.Unmarshal(t.InputSchema, &schema); err != nil && !everywhere {
		return t, nil // not an object schema: nothing declared to fix
	}
	props, _ := schema["properties"].(map[string]any)
	closed := schema["additionalProperties"] == false && schema["patternProperties"] == nil
	var declared, sent []string
	refused := make(map[string]bool, len(f))
	for name := range f {
		_, listed := props[name]
		if listed {
			declared = append(declared, name)
		}
		if listed || everywhere {
			refused[name] = true
		}
		if listed || (everywhere && !closed) {
			sent = append(sent, name)
		}
	}
	if len(refused) == 0 {
		return t, nil
	}
	sort.Strings(sent) // the first missing value is the same every time
	out := *t
	if len(declared) > 0 {
		for _, name := range declared {
			delete(props, name)
		}
		if req, ok := schema["required"].([]any); ok {
			schema["required"] = slices.DeleteFunc(req, func(v any) bool { s, _ := v.(string); return slices.Contains(declared, s) })
		}
		raw, err := json.Marshal(schema)
		if err != nil {
			return nil, err
		}
		out.InputSchema = raw
	}
	out.FromIdentity = slices.Clone(t.FromIdentity)
	for _, name := range sent {
		if id := f[name].Identity(); id != "" {
			out.FromIdentity = append(out.FromIdentity, fmt.Sprintf("argument %s: {{ %s }}", name, id))
		}
	}
	if out.Cache != nil && len(out.FromIdentity) > 0 {
		c := *out.Cache
		c.Shared = false
		out.Cache = &c
	}
	next := t.Executor
	values := make(FixedArgs, len(sent)) // the fixed arguments this tool is sent
	for _, name := range sent {
		values[name] = f[name]
	}
	out.Executor = pipeline.ExecutorFunc(func(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
		args := make(map[string]any, len(call.Inputs)+len(values))
		for k, v := range call.Inputs {
			if refused[k] {
				if slices.Contains(declared, k) { // it left the schema
					return nil, pipeline.Fail(pipeline.StageValidation, nil, "unknown input %q", k)
				}
				return nil, pipeline.Fail(pipeline.StageValidation, nil, "input %q is fixed by the gateway (set): a caller cannot give it", k)
			}
			args[k] = v
		}
		for _, name := range sent {
			if values[name].omitted {
				continue
			}
			v, err := values[name].Value(call)
			if err != nil {
				return nil, err
			}
			args[name] = v
		}
		c := *call
		c.Inputs = args
		return next.Execute(ctx, &c)
	})
	return &out, nil
}
