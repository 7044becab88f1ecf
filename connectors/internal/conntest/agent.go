package conntest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqlagent"
)

// AgentEngine builds cfg's tools (pipeline/sqlagent) and an engine that
// serves them. Each tool gets the caller from its call's context (AsCaller),
// as an auth stage would give it.
func AgentEngine(t testing.TB, cfg sqlagent.Config) *pipeline.Engine {
	t.Helper()
	tools, err := sqlagent.Build(cfg)
	if err != nil {
		t.Fatalf("sqlagent.Build: %v", err)
	}
	for _, tool := range tools {
		tool.Auth = callerAuth{}
	}
	e, err := pipeline.NewEngine(tools)
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	return e
}

type callerKey struct{}

// AsCaller makes id the verified caller of the calls run under ctx.
func AsCaller(ctx context.Context, id *pipeline.Identity) context.Context {
	return context.WithValue(ctx, callerKey{}, id)
}

type callerAuth struct{}

func (callerAuth) Authorize(ctx context.Context, _ *pipeline.Call) (*pipeline.Identity, error) {
	id, _ := ctx.Value(callerKey{}).(*pipeline.Identity)
	return id, nil
}

// CallTool runs tool with args (as a client sends them: JSON, decoded with
// UseNumber) and returns the result's JSON, or the call's error.
func CallTool(ctx context.Context, t testing.TB, e *pipeline.Engine, tool, args string) (string, *pipeline.Error) {
	t.Helper()
	var in map[string]any
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		t.Fatalf("arguments %s: %v", args, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	res, perr := e.Call(ctx, tool, in, &pipeline.RequestInfo{})
	if perr != nil {
		return "", perr
	}
	out, err := json.Marshal(res.Value)
	if err != nil {
		t.Fatalf("%s: result not JSON: %v", tool, err)
	}
	return string(out), nil
}

// MustCall is CallTool that fails the test on error.
func MustCall(ctx context.Context, t testing.TB, e *pipeline.Engine, tool, args string) string {
	t.Helper()
	out, perr := CallTool(ctx, t, e, tool, args)
	if perr != nil {
		t.Fatalf("%s %s: %v", tool, args, perr)
	}
	return out
}

// Refused checks that each statement is refused through tool (a -32000
// stage failure) and that state, which sums up the database (row counts
// and checksums of every table, sequences, whatever else a write could
// touch), is the same after every attempt as before the first.
func Refused(t *testing.T, e *pipeline.Engine, tool string, statements []string, state func() string) {
	t.Helper()
	before := state()
	for _, sql := range statements {
		args, _ := json.Marshal(map[string]any{"sql": sql})
		out, perr := CallTool(context.Background(), t, e, tool, string(args))
		if perr == nil {
			t.Errorf("%q ran: %s", sql, out)
		} else if perr.Code != pipeline.CodeStageFailed {
			t.Errorf("%q: code %d, want %d: %v", sql, perr.Code, pipeline.CodeStageFailed, perr)
		} else {
			t.Logf("%q: %v", sql, perr)
		}
		if after := state(); after != before {
			t.Fatalf("after %q the database changed:\nbefore %s\nafter  %s", sql, before, after)
		}
	}
}

// JSONArgs writes a tool's arguments.
func JSONArgs(t testing.TB, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Direct is a statement sent to AgentQuery past the guard, and whether
// the database refuses it (else it runs, and its effect must be undone).
type Direct struct {
	SQL     string
	Args    []any
	Refused bool
}

// RefusedByDatabase sends each statement to db.AgentQuery directly, with
// no guard before it, and checks the database's verdict and that state
// is unchanged after each; after, when set, checks more (the pooled
// session) and returns what is wrong.
func RefusedByDatabase(t *testing.T, db pipeline.AgentSQL, cases []Direct, state func() string, after func() string) {
	t.Helper()
	before := state()
	for _, tc := range cases {
		_, err := db.AgentQuery(context.Background(), pipeline.AgentSession{}, pipeline.AgentStatement{SQL: tc.SQL, Args: tc.Args, MaxRows: 10, MaxResultSize: 1 << 20})
		switch {
		case tc.Refused && err == nil:
			t.Errorf("%q ran", tc.SQL)
		case !tc.Refused && err != nil:
			t.Errorf("%q: %v", tc.SQL, err)
		case err != nil:
			t.Logf("%q: %v", tc.SQL, err)
		}
		if now := state(); now != before {
			t.Fatalf("after %q the database changed:\nbefore %s\nafter  %s", tc.SQL, before, now)
		}
		if after != nil {
			if wrong := after(); wrong != "" {
				t.Fatalf("after %q: %s", tc.SQL, wrong)
			}
		}
	}
}
