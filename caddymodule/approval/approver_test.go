package approval

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
)

func testApprover(keys ...[]byte) *Approver {
	return New(Options{Keys: keys, Audit: zap.NewNop()})
}

func testKey(c byte) []byte { return []byte(strings.Repeat(string(c), 32)) }

func approvalCall(tool, subject string, args map[string]any) *pipeline.Call {
	c := &pipeline.Call{Tool: &pipeline.Tool{Name: tool}, Inputs: args}
	if subject != "" {
		c.Identity = &pipeline.Identity{Provider: "keys", Subject: subject}
	}
	return c
}

// A 2026-07-28 requestState verifies only for the call it was issued for:
// the same tool, arguments and caller, under a key the gateway holds.
func TestApprovalStateBinding(t *testing.T) {
	a := testApprover(testKey('a'))
	issued := time.UnixMilli(1_700_000_000_123)
	asked := approvalCall("add-note", "alice", map[string]any{"body": "x", "n": 1})
	state, err := a.sign(asked, issued)
	if err != nil {
		t.Fatal(err)
	}
	if other, _ := a.sign(asked, issued); other == state {
		t.Fatal("two questions for one call share a state: one answer would answer both")
	}

	got, nonce, ok := a.verify(state, approvalCall("add-note", "alice", map[string]any{"n": 1, "body": "x"}))
	if !ok || !got.Equal(issued) || nonce != strings.Split(state, ".")[2] {
		t.Fatalf("the asked call: %v %q %v", got, nonce, ok)
	}
	otherProvider := approvalCall("add-note", "alice", map[string]any{"body": "x", "n": 1})
	otherProvider.Identity.Provider = "jwt"
	refused := map[string]*pipeline.Call{
		"other arguments": approvalCall("add-note", "alice", map[string]any{"body": "y", "n": 1}),
		"extra argument":  approvalCall("add-note", "alice", map[string]any{"body": "x", "n": 1, "m": 2}),
		"other tool":      approvalCall("purge-notes", "alice", map[string]any{"body": "x", "n": 1}),
		"other caller":    approvalCall("add-note", "bob", map[string]any{"body": "x", "n": 1}),
		"no caller":       approvalCall("add-note", "", map[string]any{"body": "x", "n": 1}),
		"other provider":  otherProvider,
	}
	for name, c := range refused {
		if _, _, ok := a.verify(state, c); ok {
			t.Errorf("%s: the state verified", name)
		}
	}
	p := strings.Split(state, ".")
	join := func(parts ...string) string { return strings.Join(parts, ".") }
	otherNonce, _ := a.sign(asked, issued)
	lastNonce := []byte(p[2])
	lastNonce[len(lastNonce)-1] ^= 1 // the same bytes to a lenient decoder
	for name, s := range map[string]string{
		"empty":          "",
		"other issued":   join(p[0], "1700000000124", p[2], p[3]),
		"other nonce":    join(p[0], p[1], strings.Split(otherNonce, ".")[2], p[3]),
		"nonce respelt":  join(p[0], p[1], string(lastNonce), p[3]),
		"other tag":      join(p[0], p[1], p[2], strings.Repeat("A", len(p[3]))),
		"version":        join("a1", p[1], p[2], p[3]),
		"version 1 form": join("a1", p[1], p[3]),
		"extra part":     state + ".x",
		"not a number":   join(p[0], "x", p[2], p[3]),
	} {
		if _, _, ok := a.verify(s, asked); ok {
			t.Errorf("%s state %q verified", name, s)
		}
	}
	// Key rotation: a state signed with the previous key still verifies
	// while that key is listed, and not after.
	if _, _, ok := testApprover(testKey('b'), testKey('a')).verify(state, asked); !ok {
		t.Error("a state signed with the previous key was refused during the rotation")
	}
	if _, _, ok := testApprover(testKey('b')).verify(state, asked); ok {
		t.Error("a state signed with a dropped key verified")
	}
}

// The node-local record: a nonce is spent once until its time is up; when
// full of unexpired nonces it refuses rather than forgets one.
func TestLocalSpentApprovals(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := &localSpent{max: 2, until: map[string]time.Time{}, now: func() time.Time { return now }}
	ctx := context.Background()
	if first, err := l.spend(ctx, "n1", time.Minute); !first || err != nil {
		t.Fatalf("first spend: %v %v", first, err)
	}
	if first, err := l.spend(ctx, "n1", time.Minute); first || err != nil {
		t.Fatalf("second spend: %v %v, want refused", first, err)
	}
	if first, _ := l.spend(ctx, "n2", time.Minute); !first {
		t.Fatal("another nonce refused")
	}
	if _, err := l.spend(ctx, "n3", time.Minute); err == nil {
		t.Fatal("a full record forgot a nonce instead of refusing")
	}
	now = now.Add(time.Minute)
	if first, err := l.spend(ctx, "n3", time.Minute); !first || err != nil {
		t.Fatalf("after the others expired: %v %v", first, err)
	}
}

// The audit hash is the same for equal arguments whatever their order,
// differs for others and under another key, and is not the plain SHA-256
// a guesser could recompute.
func TestApprovalArgsHash(t *testing.T) {
	a, b := testApprover(testKey('a')), testApprover(testKey('b'))
	h := a.argsHash(map[string]any{"body": "hunter2", "n": 1})
	if len(h) != 32 || strings.Trim(h, "0123456789abcdef") != "" {
		t.Fatalf("hash %q: want 32 hex digits", h)
	}
	if a.argsHash(map[string]any{"n": 1, "body": "hunter2"}) != h {
		t.Error("equal arguments hash differently")
	}
	if a.argsHash(map[string]any{"body": "hunter3", "n": 1}) == h {
		t.Error("other arguments hash the same")
	}
	if b.argsHash(map[string]any{"body": "hunter2", "n": 1}) == h {
		t.Error("the hash does not depend on the key")
	}
}

// The form names the tool (and its source) and shows the arguments the
// tool will run with; it asks for no fields.
func TestApprovalForm(t *testing.T) {
	c := approvalCall("crm_delete_contact", "alice", map[string]any{"id": 42, "reason": "duplicate"})
	c.Tool.Source = "crm"
	form, err := approvalForm(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"crm_delete_contact"`, `"crm"`, "\"id\": 42", "\"reason\": \"duplicate\"", "decline"} {
		if !strings.Contains(form.Message, want) {
			t.Errorf("message lacks %s:\n%s", want, form.Message)
		}
	}
	if err := form.Validate(); err != nil {
		t.Errorf("not a valid form elicitation: %v", err)
	}
	schema := form.RequestedSchema.(map[string]any)
	if schema["type"] != "object" || len(schema["properties"].(map[string]any)) != 0 {
		t.Errorf("requested schema %v", schema)
	}
	empty, _ := approvalForm(approvalCall("t", "", nil))
	if !strings.Contains(empty.Message, "Arguments:\n{}") {
		t.Errorf("no arguments shown as {}:\n%s", empty.Message)
	}
}
