package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/pipeline"
)

const scriptToken = "tok-4e1d9b7a2c8f6e30"

// authScript is the test's auth function: it decides from the headers and
// the tool, and has one branch per failure the plugin must handle.
const authScript = `export function check({headers, tool, remote_addr}) {
	const mode = headers['x-mode'] ?? ''
	switch (mode) {
	case 'echo': // everything the function was given, as claims
		return {subject: 'echo', claims: {headers, tool, remote_addr}}
	case 'async':
		return Promise.resolve({subject: 'later'})
	case 'string':
		return 'alice'
	case 'nosubject':
		return {claims: {role: 'x'}}
	case 'emptysubject':
		return {subject: '  '}
	case 'badclaims':
		return {subject: 'a', claims: [headers.authorization]}
	case 'loop':
		for (;;) {}
	case 'typeerror': // a bug that makes goja quote the header value
		headers.authorization()
	}
	if (headers.authorization !== 'Bearer ` + scriptToken + `') throw new Error('unknown token')
	if (tool === 'admin-only') throw new Error('admins only')
	return {subject: 'alice', claims: {scope: 'a:read b:write', level: 3}}
}`

func provisionScript(t testing.TB, s *Script) *Script {
	t.Helper()
	if err := s.Provision(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	return s
}

func testScriptFile(t testing.TB) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "auth.js")
	if err := os.WriteFile(file, []byte(authScript), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func scriptRequest(tool string, kv ...string) *pipeline.AuthRequest {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return &pipeline.AuthRequest{Header: h, Tool: tool, RemoteAddr: "192.0.2.7:4711"}
}

func TestScriptIdentity(t *testing.T) {
	s := provisionScript(t, &Script{File: testScriptFile(t) + "#check"})
	id, err := s.Authenticate(context.Background(), scriptRequest("reports", "Authorization", "Bearer "+scriptToken))
	if err != nil {
		t.Fatal(err)
	}
	if id.Subject != "alice" || !reflect.DeepEqual(id.Scopes(), []string{"a:read", "b:write"}) || id.Claims["level"] != json.Number("3") {
		t.Errorf("identity %+v", id)
	}
	if err := (&pipeline.Policy{Scopes: []string{"b:write"}, Claims: map[string][]string{"level": {"3"}}}).Check(id); err != nil {
		t.Errorf("the policy check does not read the script's claims: %v", err)
	}

	id, err = s.Authenticate(context.Background(), scriptRequest("", "Authorization", "Bearer "+scriptToken))
	if err != nil || id.Subject != "alice" {
		t.Errorf("endpoint layer (no tool): %+v %v", id, err)
	}
	id, err = s.Authenticate(context.Background(), scriptRequest("x", "X-Mode", "async"))
	if err != nil || id.Subject != "later" || id.Claims == nil {
		t.Errorf("a promise of an identity: %+v %v", id, err)
	}
	if !s.PerTool() {
		t.Errorf("the answer depends on the tool, but PerTool is false")
	}
}

// TestScriptSeesRequest: headers (lower-case names, repeated values joined
// as HTTP does), the tool's name and the remote address reach the function.
func TestScriptSeesRequest(t *testing.T) {
	s := provisionScript(t, &Script{File: testScriptFile(t) + "#check"})
	id, err := s.Authenticate(context.Background(), scriptRequest("read-customers", "X-Mode", "echo", "X-Tenant", "a", "X-Tenant", "b"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"headers":     map[string]any{"x-mode": "echo", "x-tenant": "a, b"},
		"tool":        "read-customers",
		"remote_addr": "192.0.2.7:4711",
	}
	if !reflect.DeepEqual(id.Claims, want) {
		t.Errorf("the function saw %v, want %v", id.Claims, want)
	}
}

func TestScriptRefusals(t *testing.T) {
	// 1s, not less: the call after the timeout builds a fresh runtime, which
	// under -race on a loaded 2-core machine took over 100ms (CI, once).
	s := provisionScript(t, &Script{File: testScriptFile(t) + "#check", Timeout: caddy.Duration(time.Second)})
	bearer := "Bearer " + scriptToken
	cases := []struct {
		name    string
		req     *pipeline.AuthRequest
		refusal string // the AuthError reason; "" when the provider cannot decide
		errHas  string // for the other errors
	}{
		{"throw", scriptRequest("t", "Authorization", "Bearer wrong-token-123"), "unknown token", ""},
		{"throw per tool", scriptRequest("admin-only", "Authorization", bearer), "admins only", ""},
		{"no headers", scriptRequest("t"), "unknown token", ""},
		{"headers at the HTTP server's bound", scriptRequest("t", "X-Big", strings.Repeat("x", 1<<20)), "unknown token", ""},
		{"goja quotes the credential", scriptRequest("t", "X-Mode", "typeerror", "Authorization", bearer), "TypeError: Value is not an object: [redacted]", ""},
		{"non-object return", scriptRequest("t", "X-Mode", "string"), "", "returned a string, want {subject, claims}"},
		{"missing subject", scriptRequest("t", "X-Mode", "nosubject"), "", "subject is null or undefined"},
		{"empty subject", scriptRequest("t", "X-Mode", "emptysubject"), "", "subject is empty"},
		{"claims not an object", scriptRequest("t", "X-Mode", "badclaims", "Authorization", bearer), "", "claims are an array"},
		{"timeout", scriptRequest("t", "X-Mode", "loop", "Authorization", bearer), "", "timed out after 1s (timeout)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, err := s.Authenticate(context.Background(), c.req)
			if err == nil {
				t.Fatalf("admitted as %+v", id)
			}
			var ae *pipeline.AuthError
			isRefusal := errors.As(err, &ae)
			switch {
			case c.refusal != "" && (!isRefusal || ae.Reason != c.refusal || ae.Missing):
				t.Errorf("got %v, want the refusal %q", err, c.refusal)
			case c.refusal == "" && isRefusal:
				t.Errorf("a script failure answered as the caller's fault: %v", err)
			case c.refusal == "" && !strings.Contains(err.Error(), c.errHas):
				t.Errorf("got %q, want it to contain %q", err, c.errHas)
			}
			if strings.Contains(err.Error(), scriptToken) || strings.Contains(err.Error(), "wrong-token-123") {
				t.Errorf("the error echoes the credential: %v", err)
			}
		})
	}
	// A runtime that timed out is dropped; the next call gets a fresh one.
	if _, err := s.Authenticate(context.Background(), scriptRequest("t", "Authorization", bearer)); err != nil {
		t.Errorf("after a timeout: %v", err)
	}
}

func TestScriptProvisionErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.js")
	if err := os.WriteFile(bad, []byte("export default function ( {"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := testScriptFile(t)
	for _, c := range []struct {
		s    Script
		want string
	}{
		{Script{}, "missing file"},
		{Script{File: filepath.Join(dir, "nope.js")}, "no such file"},
		{Script{File: bad}, "bad.js:1:"},
		{Script{File: good + "#verify"}, `no export "verify"`},
		{Script{File: good + "#check", FetchAllow: []string{"http://x"}}, "fetch_allow"},
	} {
		err := c.s.Provision(caddy.Context{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.s, err, c.want)
		}
	}
}

func TestRedact(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("alice:open-sesame"))
	long := strings.Repeat("x", 1000) + " " + scriptToken[:10] + "…"
	req := scriptRequest("t", "Authorization", "Bearer "+scriptToken, "X-Basic", "Basic "+basic, "Cookie", "sid=abcdef123; theme=dark")
	for _, c := range []struct{ in, want string }{
		{"unknown token", "unknown token"},
		{"Value is not an object: Bearer " + scriptToken, "Value is not an object: [redacted]"},
		{"bad " + scriptToken + "!", "bad [redacted]!"},
		{"user alice:open-sesame", "user [redacted]"},
		{"password open-sesame wrong", "password [redacted] wrong"},
		{"session abcdef123 expired", "session [redacted] expired"},
		{"line\nbreak\x00", "line break "},
		{"a=b", "a=b"}, // pieces under minRedacted stay
	} {
		if got := redact(c.in, req); got != c.want {
			t.Errorf("redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	got := redact(long, req)
	if strings.Contains(got, scriptToken[:minRedacted]) || len(got) > maxReasonSize+len("…") {
		t.Errorf("a cut message keeps the start of the token or is too long: %q", got)
	}
}
