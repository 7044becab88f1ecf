package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type funcApprover func(ctx context.Context, c *Call) error

func (f funcApprover) Approve(ctx context.Context, c *Call) error { return f(ctx, c) }

// The approval stage runs after input validation, on the inputs as they
// will execute, and before the executor; whatever it answers other than
// nil, the executor never runs.
func TestApprovalStage(t *testing.T) {
	boom := errors.New("session write failed: token=s3cret")
	tests := []struct {
		name    string
		approve func(c *Call) error
		wantRes string // the result's value or native JSON; "" when it fails
		wantErr string // the wire message; "" when it succeeds
	}{
		{"approved", func(*Call) error { return nil }, `7`, ""},
		{"declined", func(*Call) error { return Fail(StageApproval, nil, "declined") }, "", "approval: declined"},
		{"failure of its own is not echoed", func(*Call) error { return boom }, "", "approval: not approved"},
		{"a safe message is shown", func(*Call) error { return &PublicError{Public: "no answer within 45s"} }, "", "approval: no answer within 45s"},
		{"asks the client in the answer", func(*Call) error {
			return &AskClient{Native: json.RawMessage(`{"resultType":"input_required"}`)}
		}, `{"resultType":"input_required"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var order []string
			var seen map[string]any
			tool := &Tool{
				Name:   "t",
				Inputs: mustSet(t, InputSpec{Name: "id", Type: "int", Required: true}),
				InputMapper: funcMapper(func(_ context.Context, p map[string]any) (any, error) {
					order = append(order, "input")
					return p["inputs"], nil
				}),
				Approval: funcApprover(func(_ context.Context, c *Call) error {
					order = append(order, "approval")
					seen = c.Inputs
					return tt.approve(c)
				}),
				Executor: funcExecutor(func(_ context.Context, c *Call) (*Result, error) {
					order = append(order, "exec")
					return &Result{Value: c.Inputs["id"]}, nil
				}),
			}
			e, err := NewEngine([]*Tool{tool})
			if err != nil {
				t.Fatal(err)
			}
			res, perr := e.Call(context.Background(), "t", map[string]any{"id": "7"}, nil)
			if seen["id"] != int64(7) {
				t.Errorf("the approver saw %v, want the validated input 7", seen)
			}
			if tt.wantErr != "" {
				if perr == nil || perr.Code != CodeStageFailed || perr.Error() != tt.wantErr {
					t.Fatalf("got %v, %v; want %q", res, perr, tt.wantErr)
				}
				if strings.Contains(perr.Error(), "s3cret") {
					t.Error("the approver's internal error reached the caller")
				}
				if got := strings.Join(order, ","); got != "input,approval" {
					t.Errorf("stages %s: the executor ran without approval", got)
				}
				return
			}
			if perr != nil {
				t.Fatal(perr)
			}
			got := string(res.Native)
			if res.Native == nil {
				b, _ := json.Marshal(res.Value)
				got = string(b)
			}
			if got != tt.wantRes {
				t.Errorf("result %s, want %s", got, tt.wantRes)
			}
			wantOrder := "input,approval,exec"
			if res.Native != nil {
				wantOrder = "input,approval"
			}
			if o := strings.Join(order, ","); o != wantOrder {
				t.Errorf("stages %s, want %s", o, wantOrder)
			}
		})
	}
}

// A tool with an approver talks back to the client, whether or not its
// source marked it interactive: the transport must not answer it directly.
func TestTalksBack(t *testing.T) {
	approve := funcApprover(func(context.Context, *Call) error { return nil })
	for _, tt := range []struct {
		tool *Tool
		want bool
	}{
		{&Tool{}, false},
		{&Tool{Interactive: true}, true},
		{&Tool{Approval: approve}, true},
	} {
		if got := tt.tool.TalksBack(); got != tt.want {
			t.Errorf("%+v: TalksBack %v, want %v", tt.tool, got, tt.want)
		}
	}
}
