package guardrail_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/guardrail"
)

// clock is a settable time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type callerKey struct{}

// fromContext is an auth stage that verifies whoever the context says.
type fromContext struct{}

func (fromContext) Authorize(ctx context.Context, _ *pipeline.Call) (*pipeline.Identity, error) {
	id, _ := ctx.Value(callerKey{}).(*pipeline.Identity)
	return id, nil
}

// engine serves tools that succeed (fail, when named so), under g.
func engine(t *testing.T, g *guardrail.Guardrail, names ...string) *pipeline.Engine {
	t.Helper()
	var tools []*pipeline.Tool
	for _, n := range names {
		tool := &pipeline.Tool{Name: n, Auth: fromContext{}, Executor: pipeline.ExecutorFunc(func(context.Context, *pipeline.Call) (*pipeline.Result, error) {
			if strings.HasPrefix(n, "failing") {
				return nil, pipeline.Fail(pipeline.StageExecution, nil, "failed")
			}
			return &pipeline.Result{Value: n}, nil
		})}
		if n == "db_describe_table" {
			tool.Aliases = []string{"db.describe_table"}
		}
		tools = append(tools, tool)
	}
	e, err := pipeline.NewEngine(tools, pipeline.WithSequencer(g))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

type conv struct {
	ctx  context.Context
	info *pipeline.RequestInfo
}

func session(id string) conv {
	return conv{context.Background(), &pipeline.RequestInfo{Session: id, ProtocolVersion: "2025-11-25"}}
}

func sessionless(subject, conversation string) conv {
	ctx := context.Background()
	if subject != "" {
		ctx = context.WithValue(ctx, callerKey{}, &pipeline.Identity{Provider: "sso", Subject: subject})
	}
	return conv{ctx, &pipeline.RequestInfo{ProtocolVersion: "2026-07-28", Conversation: conversation}}
}

func ok(t *testing.T, e *pipeline.Engine, c conv, tool string) {
	t.Helper()
	if _, perr := e.Call(c.ctx, tool, nil, c.info); perr != nil {
		t.Fatalf("%s: %v", tool, perr)
	}
}

func refused(t *testing.T, e *pipeline.Engine, c conv, tool, want string) {
	t.Helper()
	_, perr := e.Call(c.ctx, tool, nil, c.info)
	if perr == nil || perr.Code != pipeline.CodeStageFailed || perr.Stage != pipeline.StageGuardrail || !strings.Contains(perr.Message, want) {
		t.Fatalf("%s: %v, want the guardrail's -32000 saying %q", tool, perr, want)
	}
}

func newGuardrail(t *testing.T, cfg guardrail.Config) *guardrail.Guardrail {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = &guardrail.Memory{Now: cfg.Now}
	}
	g, err := guardrail.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRequiresTwoSessions: query runs only after describe_table has
// succeeded in the same session; another session's describe does not
// count; the refusal names the tool to call first; a failed describe is
// no success; the alias of describe counts as describe.
func TestRequiresTwoSessions(t *testing.T) {
	g := newGuardrail(t, guardrail.Config{Requires: []guardrail.Requires{{Tool: "db_query", Needs: "db_describe_table"}}})
	e := engine(t, g, "db_query", "db_describe_table", "failing_describe")
	a, b := session("A"), session("B")
	refused(t, e, a, "db_query", "call db_describe_table first")
	ok(t, e, b, "db.describe_table") // the alias
	refused(t, e, a, "db_query", "call db_describe_table first")
	ok(t, e, b, "db_query")
	ok(t, e, b, "db_query")
	ok(t, e, a, "db_describe_table")
	ok(t, e, a, "db_query")
}

// TestRequiresWithin: within <n> calls counts the conversation's
// successful calls since; within <duration> the time since.
func TestRequiresWithin(t *testing.T) {
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	g := newGuardrail(t, guardrail.Config{Now: clk.Now, Requires: []guardrail.Requires{
		{Tool: "query", Needs: "interpret", WithinCalls: 2},
		{Tool: "report", Needs: "interpret", Within: time.Minute},
	}})
	e := engine(t, g, "query", "report", "interpret", "other", "failing")
	s := session("S")
	ok(t, e, s, "interpret")
	ok(t, e, s, "query")                                               // interpret was the last call
	if _, perr := e.Call(s.ctx, "failing", nil, s.info); perr == nil { // a failure is not counted...
		t.Fatal("failing succeeded")
	}
	ok(t, e, s, "query") // ...so interpret is still among the last 2
	refused(t, e, s, "query", "call interpret again first: query runs only within 2 calls after it, and 2 calls have succeeded since")
	ok(t, e, s, "report")
	clk.advance(2 * time.Minute)
	refused(t, e, s, "report", "call interpret again first: report runs only within 1m0s after it, and it last succeeded 2m0s ago")
	ok(t, e, s, "interpret")
	ok(t, e, s, "report")
	ok(t, e, s, "query")
}

// TestAfterDeny: once a PII read has run in a session, sends are refused
// in it for good (and only in it); patterns match tool names.
func TestAfterDeny(t *testing.T) {
	g := newGuardrail(t, guardrail.Config{After: []guardrail.After{{Tool: "pii_*", Deny: []string{"send_*", "export"}}}})
	e := engine(t, g, "pii_read", "send_mail", "send_sms", "export", "other")
	a, b := session("A"), session("B")
	ok(t, e, a, "send_mail")
	ok(t, e, a, "pii_read")
	refused(t, e, a, "send_mail", "send_mail is not allowed in this conversation any more: pii_* has run in it")
	refused(t, e, a, "send_sms", "pii_*")
	refused(t, e, a, "export", "pii_*")
	ok(t, e, a, "other")
	ok(t, e, b, "send_mail")
}

// TestSessionlessConversations: on 2026-07-28 the record is keyed to the
// verified caller and the client's conversation id: another caller
// with the same id, or the same caller in another conversation, has its
// own; a call with no conversation id, or no verified caller, cannot run
// a guarded tool and is told why.
func TestSessionlessConversations(t *testing.T) {
	g := newGuardrail(t, guardrail.Config{Requires: []guardrail.Requires{{Tool: "query", Needs: "describe"}}})
	e := engine(t, g, "query", "describe")
	ok(t, e, sessionless("alice", "c1"), "describe")
	ok(t, e, sessionless("alice", "c1"), "query")
	refused(t, e, sessionless("bob", "c1"), "query", "call describe first")
	refused(t, e, sessionless("alice", "c2"), "query", "call describe first")
	refused(t, e, sessionless("alice", ""), "query", "the client sent no conversation id in _meta")
	refused(t, e, sessionless("", "c1"), "query", "holds only with a verified caller")
	ok(t, e, sessionless("alice", ""), "describe") // unguarded tools run as ever
}

// TestStoreFailsClosed: a record that cannot be read refuses the
// guarded tool; a success that cannot be recorded withholds the result.
func TestStoreFailsClosed(t *testing.T) {
	g := newGuardrail(t, guardrail.Config{
		Store: &guardrail.Memory{MaxEntries: 1},
		After: []guardrail.After{{Tool: "pii_read", Deny: []string{"send"}}},
	})
	e := engine(t, g, "pii_read", "send")
	ok(t, e, session("A"), "pii_read") // the one entry
	refused(t, e, session("B"), "pii_read", "cannot be recorded, so its result is withheld")
	ok(t, e, session("B"), "send")
}

func TestNewChecks(t *testing.T) {
	for _, cfg := range []guardrail.Config{
		{Requires: []guardrail.Requires{{Tool: "a", Needs: "a"}}},
		{Requires: []guardrail.Requires{{Tool: "a", Needs: "b", WithinCalls: 1, Within: time.Second}}},
		{Requires: []guardrail.Requires{{Tool: "a"}}},
		{After: []guardrail.After{{Tool: "a"}}},
		{After: []guardrail.After{{Tool: "[", Deny: []string{"b"}}}},
	} {
		cfg.Store = &guardrail.Memory{}
		if _, err := guardrail.New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

// TestRecordExpires: a conversation's record lasts TTL after its last
// recorded call.
func TestRecordExpires(t *testing.T) {
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	g := newGuardrail(t, guardrail.Config{Now: clk.Now, TTL: time.Hour, Requires: []guardrail.Requires{{Tool: "query", Needs: "describe"}}})
	e := engine(t, g, "query", "describe")
	s := session("S")
	ok(t, e, s, "describe")
	clk.advance(59 * time.Minute)
	ok(t, e, s, "query")
	clk.advance(2 * time.Minute)
	refused(t, e, s, "query", "call describe first")
}
