package pipeline

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// recorder is an Observer that notes what the engine reports.
type recorder struct {
	events []string
	calls  []*Call
	query  QueryInfo
}

type stageKey struct{}

func (r *recorder) Stage(ctx context.Context, call *Call, stage Stage) (context.Context, func(error)) {
	r.events = append(r.events, "start "+string(stage))
	r.calls = append(r.calls, call)
	return context.WithValue(ctx, stageKey{}, stage), func(err error) {
		r.events = append(r.events, "end "+string(stage)+" "+outcomeOf(err))
	}
}

func (r *recorder) Query(ctx context.Context, call *Call, q QueryInfo) (context.Context, func(error)) {
	r.events = append(r.events, "start query")
	r.query = q
	return ctx, func(err error) { r.events = append(r.events, "end query "+outcomeOf(err)) }
}

func outcomeOf(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// rowsConnector answers every statement with no rows, or fails.
type rowsConnector struct{ fail error }

func (rowsConnector) Dialect() sqltemplate.Dialect { return sqltemplate.Postgres }
func (rowsConnector) ReadOnly() bool               { return true }
func (c rowsConnector) Query(context.Context, string, []any) (*Rows, error) {
	if c.fail != nil {
		return nil, c.fail
	}
	return &Rows{}, nil
}

func TestObserverSeesEveryStage(t *testing.T) {
	stmt, err := sqltemplate.Compile("SELECT * FROM t WHERE a = {{ inputs.a }}", sqltemplate.Options{
		Dialect: sqltemplate.Postgres, Inputs: map[string]sqltemplate.Param{"a": {}},
	})
	if err != nil {
		t.Fatal(err)
	}
	identity := funcAuth(func(ctx context.Context, _ *Call) (*Identity, error) {
		if ctx.Value(stageKey{}) != StageAuth {
			t.Error("the auth hook does not run in its stage's context")
		}
		return &Identity{Subject: "s"}, nil
	})
	mapper := funcMapper(func(_ context.Context, p map[string]any) (any, error) {
		if v, ok := p["inputs"]; ok {
			return v, nil
		}
		return p["results"], nil
	})
	tests := []struct {
		name string
		tool *Tool
		args map[string]any
		want []string
		q    QueryInfo
	}{
		{
			name: "every stage, db-backed",
			tool: &Tool{Name: "t", Inputs: mustSet(t, InputSpec{Name: "a", Type: "string"}), Auth: identity,
				InputMapper: mapper, OutputMapper: mapper,
				Executor: &DBExecutor{Connector: rowsConnector{}, Statement: stmt}},
			args: map[string]any{"a": "secret-value"},
			want: []string{"start authentication", "end authentication ok", "start input transform", "end input transform ok",
				"start input validation", "end input validation ok", "start execution", "start query", "end query ok",
				"end execution ok", "start output transform", "end output transform ok"},
			q: QueryInfo{System: "postgres", Statement: "SELECT * FROM t WHERE a = $1"},
		},
		{
			name: "validation fails: the call stops there",
			tool: &Tool{Name: "t", Inputs: mustSet(t, InputSpec{Name: "a", Type: "int", Required: true}), Executor: echo()},
			args: map[string]any{"a": "x"},
			want: []string{"start input validation", "end input validation error"},
		},
		{
			name: "the query fails",
			tool: &Tool{Name: "t", Inputs: mustSet(t, InputSpec{Name: "a", Type: "string"}),
				Executor: &DBExecutor{Connector: rowsConnector{fail: errors.New("boom")}, Statement: stmt}},
			args: map[string]any{"a": "v"},
			want: []string{"start input validation", "end input validation ok", "start execution", "start query",
				"end query error", "end execution error"},
			q: QueryInfo{System: "postgres", Statement: "SELECT * FROM t WHERE a = $1"},
		},
		{
			name: "skipped stages are not reported",
			tool: &Tool{Name: "t", Executor: echo()},
			want: []string{"start execution", "end execution ok"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewEngine([]*Tool{tc.tool})
			if err != nil {
				t.Fatal(err)
			}
			rec := &recorder{}
			_, _ = e.Call(WithObserver(context.Background(), rec), "t", tc.args, nil)
			if !slices.Equal(rec.events, tc.want) {
				t.Fatalf("events\n got %q\nwant %q", rec.events, tc.want)
			}
			if rec.query != tc.q {
				t.Fatalf("query info %+v, want %+v", rec.query, tc.q)
			}
			for _, c := range rec.calls {
				if c == nil || c.Tool != tc.tool {
					t.Fatalf("a stage was reported without its call")
				}
			}
		})
	}
}

// Without an observer the engine runs exactly as before.
func TestNoObserver(t *testing.T) {
	e, err := NewEngine([]*Tool{{Name: "t", Executor: echo()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, perr := e.Call(context.Background(), "t", map[string]any{"x": 1}, nil); perr != nil {
		t.Fatal(perr)
	}
}
