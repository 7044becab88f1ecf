package pipeline

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

func TestPolicyCheck(t *testing.T) {
	id := &Identity{Subject: "alice", Claims: map[string]any{
		"scope":  "users:read users:write",
		"scp":    []any{"extra"},
		"groups": []any{"eng", "ops"},
		"tenant": "acme",
		"admin":  true,
	}}
	cases := []struct {
		name   string
		policy *Policy
		fails  string // the failed check, "" for pass
	}{
		{"nil policy", nil, ""},
		{"all scopes present", &Policy{Scopes: []string{"users:read", "extra"}}, ""},
		{"a scope missing", &Policy{Scopes: []string{"users:read", "admin"}}, "scope"},
		{"claim string", &Policy{Claims: map[string][]string{"tenant": {"other", "acme"}}}, ""},
		{"claim list", &Policy{Claims: map[string][]string{"groups": {"ops"}}}, ""},
		{"claim bool", &Policy{Claims: map[string][]string{"admin": {"true"}}}, ""},
		{"claim mismatch", &Policy{Claims: map[string][]string{"tenant": {"globex"}}}, "claim"},
		{"claim absent", &Policy{Claims: map[string][]string{"role": {"x"}}}, "claim"},
		{"subject", &Policy{Subjects: []string{"bob", "alice"}}, ""},
		{"subject mismatch", &Policy{Subjects: []string{"bob"}}, "subject"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.policy.Check(id)
			var pe *PolicyError
			switch {
			case c.fails == "" && err != nil:
				t.Fatalf("unexpected %v", err)
			case c.fails != "" && (!errors.As(err, &pe) || pe.Check != c.fails):
				t.Fatalf("want %s failure, got %v", c.fails, err)
			}
		})
	}
}

// staticProvider is a provider for the pipeline's own tests: it accepts
// one token in X-Token and counts its calls.
type staticProvider struct{ calls atomic.Int64 }

func (p *staticProvider) Authenticate(_ context.Context, req *AuthRequest) (*Identity, error) {
	p.calls.Add(1)
	switch req.Header.Get("X-Token") {
	case "":
		return nil, NoCredentials()
	case "good-token":
		return &Identity{Subject: "alice", Claims: map[string]any{"scope": "read"}}, nil
	case "down":
		return nil, errors.New("idp unreachable at 10.0.0.1")
	default:
		return nil, InvalidCredentials("unknown token")
	}
}

func TestAuthCheckStage(t *testing.T) {
	p := &staticProvider{}
	run := func(token string, policy *Policy) (*Identity, *Error) {
		tool := &Tool{Name: "t", Executor: nil}
		tool.Auth = &AuthCheck{ProviderName: "p", Provider: p, Policy: policy}
		req := &RequestInfo{Header: map[string][]string{}}
		if token != "" {
			req.Header.Set("X-Token", token)
		}
		id, err := tool.Auth.Authorize(context.Background(), &Call{Tool: tool, Request: req})
		if err != nil {
			return nil, err.(*Error)
		}
		return id, nil
	}
	if id, err := run("good-token", &Policy{Scopes: []string{"read"}}); err != nil || id.Subject != "alice" {
		t.Fatalf("%v %v", id, err)
	}
	cases := []struct{ token, scope, msg string }{
		{"", "read", "credentials required"},
		{"bad-token", "read", "invalid credentials: unknown token"},
		{"good-token", "write", "not permitted to call this tool"},
		{"down", "read", "authentication unavailable, try again later"},
	}
	for _, c := range cases {
		_, err := run(c.token, &Policy{Scopes: []string{c.scope}})
		if err == nil || err.Code != CodeStageFailed || err.Stage != StageAuth || err.Message != c.msg {
			t.Errorf("token %q: got %+v, want -32000 %q", c.token, err, c.msg)
		}
		// Nothing of the policy (the scope) nor of the credential leaks.
		if err != nil && (strings.Contains(err.Message, c.scope) || (c.token != "" && strings.Contains(err.Message, c.token))) {
			t.Errorf("message %q leaks the policy or the token", err.Message)
		}
	}
}

func TestAuthMemoVerifiesOncePerRequest(t *testing.T) {
	p := &staticProvider{}
	a := &AuthCheck{ProviderName: "p", Provider: p}
	b := &AuthCheck{ProviderName: "p", Provider: p, Policy: &Policy{Scopes: []string{"read"}}}
	req := &RequestInfo{Header: map[string][]string{"X-Token": {"good-token"}}}
	ctx := WithAuthMemo(context.Background())
	for range 3 {
		if !a.Allows(ctx, req, "x") || !b.Allows(ctx, req, "y") {
			t.Fatal("refused")
		}
	}
	if n := p.calls.Load(); n != 1 {
		t.Errorf("provider ran %d times in one request, want 1", n)
	}
	a.Allows(context.Background(), req, "x")
	a.Allows(context.Background(), req, "x")
	if n := p.calls.Load(); n != 3 {
		t.Errorf("without a memo every check runs the provider: %d, want 3", n)
	}
}

// identitySpy records what the later stages see of the caller.
type identitySpy struct {
	payloadAuth any
	callID      *Identity
}

func (s *identitySpy) Transform(_ context.Context, payload map[string]any) (any, error) {
	s.payloadAuth = payload["auth"]
	return payload["inputs"], nil
}

func (s *identitySpy) Execute(_ context.Context, call *Call) (*Result, error) {
	s.callID = call.Identity
	return &Result{Value: "ok"}, nil
}

func TestIdentityReachesLaterStages(t *testing.T) {
	spy := &identitySpy{}
	tool := &Tool{Name: "t", Executor: spy, InputMapper: spy,
		Auth: &AuthCheck{ProviderName: "p", Provider: &staticProvider{}}}
	e, err := NewEngine([]*Tool{tool})
	if err != nil {
		t.Fatal(err)
	}
	req := &RequestInfo{Header: map[string][]string{"X-Token": {"good-token"}}}
	if _, perr := e.Call(context.Background(), "t", map[string]any{}, req); perr != nil {
		t.Fatal(perr)
	}
	if spy.callID == nil || spy.callID.Subject != "alice" || spy.callID.Provider != "p" {
		t.Errorf("executor saw identity %+v (want subject alice, provider p)", spy.callID)
	}
	auth, _ := spy.payloadAuth.(map[string]any)
	if auth["subject"] != "alice" || auth["claims"].(map[string]any)["scope"] != "read" {
		t.Errorf("mapper payload auth %+v", spy.payloadAuth)
	}
	if _, perr := e.Call(context.Background(), "t", map[string]any{}, &RequestInfo{Header: map[string][]string{}}); perr == nil || perr.Code != CodeStageFailed {
		t.Errorf("call without credentials: %v", perr)
	}
}

// perToolProvider answers per tool (as a script plugin would).
type perToolProvider struct {
	staticProvider
}

func (p *perToolProvider) PerTool() bool { return true }

func TestAuthMemoPerToolProvider(t *testing.T) {
	p := &perToolProvider{}
	a := &AuthCheck{ProviderName: "p", Provider: p}
	req := &RequestInfo{Header: map[string][]string{"X-Token": {"good-token"}}}
	ctx := WithAuthMemo(context.Background())
	for _, tool := range []string{"x", "y", "x", "y"} {
		a.Allows(ctx, req, tool)
	}
	if n := p.calls.Load(); n != 2 {
		t.Errorf("a per-tool provider ran %d times for two tools, want 2", n)
	}
}
