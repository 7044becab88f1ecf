package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// funcExecutor, funcAuth and funcMapper let the stage sequence be tested
// without a database or a script runtime.
type funcExecutor func(ctx context.Context, c *Call) (*Result, error)

func (f funcExecutor) Execute(ctx context.Context, c *Call) (*Result, error) { return f(ctx, c) }

type funcAuth func(ctx context.Context, c *Call) (*Identity, error)

func (f funcAuth) Authorize(ctx context.Context, c *Call) (*Identity, error) { return f(ctx, c) }

type funcMapper func(ctx context.Context, p map[string]any) (any, error)

func (f funcMapper) Transform(ctx context.Context, p map[string]any) (any, error) { return f(ctx, p) }

func echo() Executor {
	return funcExecutor(func(_ context.Context, c *Call) (*Result, error) { return &Result{Value: c.Inputs}, nil })
}

func TestEngineStages(t *testing.T) {
	inputs := mustSet(t, InputSpec{Name: "id", Type: "int", Required: true})
	var order []string
	tool := &Tool{
		Name:   "t",
		Inputs: inputs,
		Auth: funcAuth(func(_ context.Context, c *Call) (*Identity, error) {
			order = append(order, "auth")
			return &Identity{Subject: "alice"}, nil
		}),
		InputMapper: funcMapper(func(_ context.Context, p map[string]any) (any, error) {
			order = append(order, "input")
			if p["auth"].(map[string]any)["subject"] != "alice" {
				t.Errorf("input mapper payload lacks identity: %v", p)
			}
			in := p["inputs"].(map[string]any)
			return map[string]any{"id": in["raw"]}, nil
		}),
		Executor: funcExecutor(func(_ context.Context, c *Call) (*Result, error) {
			order = append(order, "exec")
			return &Result{Value: c.Inputs["id"]}, nil
		}),
		OutputMapper: funcMapper(func(_ context.Context, p map[string]any) (any, error) {
			order = append(order, "output")
			return []any{p["results"], p["tool"].(map[string]any)["name"]}, nil
		}),
	}
	e, err := NewEngine([]*Tool{tool})
	if err != nil {
		t.Fatal(err)
	}
	res, perr := e.Call(context.Background(), "t", map[string]any{"raw": "7"}, nil)
	if perr != nil {
		t.Fatal(perr)
	}
	if got := strings.Join(order, ","); got != "auth,input,exec,output" {
		t.Fatalf("stage order %s", got)
	}
	v := res.Value.([]any)
	if v[0] != int64(7) || v[1] != "t" {
		t.Fatalf("result %v", v)
	}
}

// An output mapper replaces the value, not the result's _meta (the cache's
// stale notice lives there) nor the cache's hint.
func TestOutputMapperKeepsMeta(t *testing.T) {
	meta := map[string]any{"notice": "stale"}
	hint := &CacheHint{TTL: 5, Private: true}
	tool := &Tool{
		Name: "t",
		Executor: funcExecutor(func(context.Context, *Call) (*Result, error) {
			return &Result{Value: 1, Meta: meta, CacheHint: hint}, nil
		}),
		OutputMapper: funcMapper(func(_ context.Context, p map[string]any) (any, error) { return 2, nil }),
	}
	e, err := NewEngine([]*Tool{tool})
	if err != nil {
		t.Fatal(err)
	}
	res, perr := e.Call(context.Background(), "t", map[string]any{}, nil)
	if perr != nil {
		t.Fatal(perr)
	}
	if res.Value != 2 || res.Meta["notice"] != "stale" || res.CacheHint != hint {
		t.Errorf("result %v, meta %v, hint %v: want 2 and the executor's meta and hint", res.Value, res.Meta, res.CacheHint)
	}
}

func TestEngineFailures(t *testing.T) {
	boom := errors.New("secret detail: password=hunter2")
	tests := []struct {
		name  string
		tool  *Tool
		args  map[string]any
		call  string
		code  int
		stage Stage
		msg   string
	}{
		{"unknown tool", &Tool{Name: "t", Executor: echo()}, nil, "nope", CodeToolNotFound, StageResolution, `tool "nope" not found`},
		{"auth refuses", &Tool{Name: "t", Executor: echo(), Auth: funcAuth(func(context.Context, *Call) (*Identity, error) {
			return nil, &PublicError{Public: "missing API key"}
		})}, nil, "t", CodeStageFailed, StageAuth, "missing API key"},
		{"input mapper throws", &Tool{Name: "t", Executor: echo(), InputMapper: funcMapper(func(context.Context, map[string]any) (any, error) {
			return nil, &PublicError{Public: "Error: bad input"}
		})}, nil, "t", CodeStageFailed, StageInputTransform, "Error: bad input"},
		{"input mapper returns non-object", &Tool{Name: "t", Executor: echo(), InputMapper: funcMapper(func(context.Context, map[string]any) (any, error) {
			return "x", nil
		})}, nil, "t", CodeStageFailed, StageInputTransform, `input mapper must return an object, got "x"`},
		{"validation", &Tool{Name: "t", Executor: echo(), Inputs: mustSet(t, InputSpec{Name: "user_id", Type: "int"})},
			map[string]any{"user_id": 42.5}, "t", CodeStageFailed, StageValidation, `input "user_id": expected integer, got 42.5`},
		{"executor error is not echoed", &Tool{Name: "t", Executor: funcExecutor(func(context.Context, *Call) (*Result, error) {
			return nil, boom
		})}, nil, "t", CodeStageFailed, StageExecution, "failed"},
		{"executor panic", &Tool{Name: "t", Executor: funcExecutor(func(context.Context, *Call) (*Result, error) {
			panic("oops")
		})}, nil, "t", CodeStageFailed, StageExecution, "internal error"},
		{"output mapper throws", &Tool{Name: "t", Executor: echo(), OutputMapper: funcMapper(func(context.Context, map[string]any) (any, error) {
			return nil, &PublicError{Public: "Error: nope"}
		})}, nil, "t", CodeStageFailed, StageOutputTransform, "Error: nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := NewEngine([]*Tool{tt.tool})
			if err != nil {
				t.Fatal(err)
			}
			_, perr := e.Call(context.Background(), tt.call, tt.args, nil)
			if perr == nil {
				t.Fatal("expected a failure")
			}
			if perr.Code != tt.code || perr.Stage != tt.stage || perr.Message != tt.msg {
				t.Fatalf("got %d %q %q, want %d %q %q", perr.Code, perr.Stage, perr.Message, tt.code, tt.stage, tt.msg)
			}
			if strings.Contains(perr.Error(), "hunter2") {
				t.Fatal("internal error text reached the caller")
			}
		})
	}
}

func TestEngineRefusesBadTools(t *testing.T) {
	if _, err := NewEngine([]*Tool{{Name: "a.b", Executor: echo()}}); err == nil {
		t.Error("dotted name accepted")
	}
	if _, err := NewEngine([]*Tool{{Name: strings.Repeat("x", 65), Executor: echo()}}); err == nil {
		t.Error("65-char name accepted")
	}
	if _, err := NewEngine([]*Tool{{Name: "a", Executor: echo()}, {Name: "a", Executor: echo()}}); err == nil {
		t.Error("duplicate accepted")
	}
	if _, err := NewEngine([]*Tool{{Name: "a"}}); err == nil {
		t.Error("tool without executor accepted")
	}
	e, err := NewEngine([]*Tool{
		{Name: "files_read", Aliases: []string{"files/read", "read", "other"}, Executor: echo()},
		{Name: "web_read", Aliases: []string{"web/read", "read"}, Executor: echo()},
		{Name: "other", Executor: echo()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if e.Lookup("files/read").Name != "files_read" || e.Lookup("web/read").Name != "web_read" {
		t.Fatal("alias does not resolve")
	}
	// Claimed by two tools, or a tool's own name: never an alias.
	if e.Lookup("read") != nil || e.Lookup("other").Name != "other" || len(e.Aliases()) != 2 {
		t.Errorf("ambiguous aliases: %v", e.Aliases())
	}
}
