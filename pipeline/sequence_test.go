package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// sequence is a Sequencer whose verdict the test sets and whose calls it
// logs.
type sequence struct {
	log    *[]string
	refuse bool
}

func (s sequence) Admit(_ context.Context, c *Call) error {
	*s.log = append(*s.log, "admit "+c.Tool.Name)
	if s.refuse {
		return errors.New("not now")
	}
	return nil
}

func (s sequence) Record(_ context.Context, c *Call) error {
	*s.log = append(*s.log, "record "+c.Tool.Name)
	return nil
}

// TestSequencerStage: the guardrail runs after validation and before
// approval (a refused call asks no one and runs nothing), on an alias
// too, and records only a call that succeeded.
func TestSequencerStage(t *testing.T) {
	var log []string
	tool := func(name string, fail bool, alias string) *Tool {
		return &Tool{
			Name:    name,
			Aliases: []string{alias},
			Inputs:  mustSet(t, InputSpec{Name: "id", Type: "int", Required: true}),
			Approval: funcApprover(func(context.Context, *Call) error {
				log = append(log, "approve "+name)
				return nil
			}),
			Executor: funcExecutor(func(context.Context, *Call) (*Result, error) {
				log = append(log, "exec "+name)
				if fail {
					return nil, errors.New("boom")
				}
				return &Result{Value: 1}, nil
			}),
		}
	}
	tools := []*Tool{tool("ok", false, "ok.alias"), tool("bad", true, "bad.alias")}
	seq := sequence{log: &log}
	e, err := NewEngine(tools, WithSequencer(seq))
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, args map[string]any) *Error {
		_, perr := e.Call(context.Background(), name, args, nil)
		return perr
	}
	_ = call("ok.alias", map[string]any{})        // invalid: never reaches the guardrail
	_ = call("ok.alias", map[string]any{"id": 1}) // admitted, approved, run, recorded
	_ = call("bad", map[string]any{"id": 1})      // run, failed: not recorded
	if got := strings.Join(log, ", "); got != "admit ok, approve ok, exec ok, record ok, admit bad, approve bad, exec bad" {
		t.Errorf("stages: %s", got)
	}

	log = nil
	e, _ = NewEngine(tools, WithSequencer(sequence{log: &log, refuse: true}))
	perr := call("ok", map[string]any{"id": 1})
	if perr == nil || perr.Stage != StageGuardrail || perr.Code != CodeStageFailed {
		t.Fatalf("refused: %v", perr)
	}
	if got := strings.Join(log, ", "); got != "admit ok" {
		t.Errorf("a refused call went on: %s", got)
	}
}
