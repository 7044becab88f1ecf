package pipeline

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestPrepareThenRun: Prepare runs the stages up to approval and stops
// there; what refuses the call refuses it in Prepare, before anything
// executes; Run then executes the prepared call. This is the split a task
// is made at (docs/tasks.md).
func TestPrepareThenRun(t *testing.T) {
	var executed int
	tool := &Tool{
		Name:   "t",
		Inputs: mustSet(t, InputSpec{Name: "id", Type: "int", Required: true}),
		Auth: funcAuth(func(context.Context, *Call) (*Identity, error) {
			return &Identity{Provider: "sso", Subject: "alice"}, nil
		}),
		Executor: funcExecutor(func(_ context.Context, c *Call) (*Result, error) {
			executed++
			return &Result{Value: c.Inputs["id"]}, nil
		}),
	}
	e, err := NewEngine([]*Tool{tool})
	if err != nil {
		t.Fatal(err)
	}
	if call, _, perr := e.Prepare(context.Background(), "t", map[string]any{}, nil); call != nil || perr == nil || perr.Stage != StageValidation {
		t.Fatalf("a call without its required input was prepared: %v %v", call, perr)
	}
	call, res, perr := e.Prepare(context.Background(), "t", map[string]any{"id": 7}, nil)
	if perr != nil || res != nil || call == nil || executed != 0 {
		t.Fatalf("prepare: %v %v %v, executed %d", call, res, perr, executed)
	}
	if call.Identity.Subject != "alice" || call.Inputs["id"] != int64(7) {
		t.Fatalf("prepared call %+v", call)
	}
	res, perr = e.Run(context.Background(), call)
	if perr != nil || res.Value != int64(7) || executed != 1 {
		t.Fatalf("run: %v %v, executed %d", res, perr, executed)
	}
}

// TestRunPanic: a panic in the execution of a prepared call is a stage
// failure, not a crash.
func TestRunPanic(t *testing.T) {
	tool := &Tool{Name: "t", Executor: funcExecutor(func(context.Context, *Call) (*Result, error) { panic("boom") })}
	e, err := NewEngine([]*Tool{tool})
	if err != nil {
		t.Fatal(err)
	}
	call, _, _ := e.Prepare(context.Background(), "t", nil, nil)
	if _, perr := e.Run(context.Background(), call); perr == nil || perr.Stage != StageExecution || perr.Message != "internal error" {
		t.Fatalf("panic became %v", perr)
	}
}

// TestTaskErrorOf: a failed task carries the error the client would have
// got for the plain call, and never the text of an error the pipeline
// did not make safe.
func TestTaskErrorOf(t *testing.T) {
	up := &Error{Code: -32042, Message: "upstream says no", Data: []byte(`{"x":1}`), Upstream: true}
	cases := []struct {
		err  error
		want TaskError
	}{
		{Fail(StageExecution, nil, "query failed: %s", "division by zero"), TaskError{Code: CodeStageFailed, Message: "execution: query failed: division by zero"}},
		{fmt.Errorf("wrapped: %w", up), TaskError{Code: -32042, Message: "upstream says no", Data: []byte(`{"x":1}`)}},
		{errors.New("dial tcp 10.0.0.7:5432: password=hunter2"), TaskError{Code: CodeStageFailed, Message: "execution: failed"}},
		{context.DeadlineExceeded, TaskError{Code: CodeStageFailed, Message: "execution: timed out"}},
	}
	for _, c := range cases {
		got := TaskErrorOf(c.err)
		if got.Code != c.want.Code || got.Message != c.want.Message || string(got.Data) != string(c.want.Data) {
			t.Errorf("%v: got %+v, want %+v", c.err, *got, c.want)
		}
	}
}
