package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// perCallerCaddyfile fronts up with `session per_caller`, the listing
// credential bearer list-token and the caller's credential, behind the JWT
// provider of idp; extra goes in the source's block too.
func perCallerCaddyfile(idp *testIdP, up *testservices.SessionUpstream, credential, extra string) string {
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		auth sso jwt {
			jwks_url %s
			issuer %s
			audience %s
		}
		default_auth sso
		source notes mcp %s {
			credential bearer list-token
			%s
			session per_caller
			%s
		}
	}
}`, idp.jwks.URL, authIssuer, authAudience, up.URL, credential, extra)
}

// TestMCPSourcePerCaller: through Caddy, two callers with their own JWTs
// get upstream sessions of their own, each carrying the caller's token and
// never the other's nor the listing token; the upstream's per-session
// state stays apart; progress of a call on a caller's session reaches that
// caller. A reload closes the sessions of the config it replaces, and a
// session unused for caller_session_idle is closed.
func TestMCPSourcePerCaller(t *testing.T) {
	idp := newTestIdP(t)
	up := testservices.StartSessionUpstream(t)
	g := startGateway(t, perCallerCaddyfile(idp, up, "credential passthrough", ""))
	alice := idp.token(t, "alice", "", nil, time.Hour)
	bob := idp.token(t, "bob", "", nil, time.Hour)
	count := func(token string) testservices.Count {
		t.Helper()
		s := authSession(t, g, "2025-06-18", map[string]string{"Authorization": "Bearer " + token})
		r := s.call(t, "notes_count")
		if r.Error != nil {
			t.Fatalf("count: %+v", r.Error)
		}
		return testservices.ParseCount(t, r.Result)
	}
	a1, b1, a2, b2 := count(alice), count(bob), count(alice), count(bob)
	if a1.Auth != "Bearer "+alice || a2.Auth != "Bearer "+alice || b1.Auth != "Bearer "+bob || b2.Auth != "Bearer "+bob {
		t.Errorf("the upstream saw other tokens than the callers' own")
	}
	if a1.Session == b1.Session || a1.Session != a2.Session || b1.Session != b2.Session || a2.N != 2 || b2.N != 2 {
		t.Errorf("sessions: alice %s %d/%d, bob %s %d/%d", a1.Session, a1.N, a2.N, b1.Session, b1.N, b2.N)
	}

	// A resource read and a prompt get go on the caller's own session too,
	// with the caller's own token.
	for _, c := range []struct {
		token string
		want  testservices.Count
	}{{alice, a1}, {bob, b1}} {
		auth := map[string]string{"Authorization": "Bearer " + c.token}
		s := authSession(t, g, "2025-06-18", auth)
		read, _ := s.postWith(t, `{"jsonrpc":"2.0","id":21,"method":"resources/read","params":{"uri":"session://whoami"}}`, auth)
		var contents struct {
			Contents []struct {
				Text string `json:"text"`
			} `json:"contents"`
		}
		var got testservices.Count
		if read.Error != nil || json.Unmarshal(read.Result, &contents) != nil || len(contents.Contents) != 1 ||
			json.Unmarshal([]byte(contents.Contents[0].Text), &got) != nil {
			t.Fatalf("resources/read: %s %+v", read.Result, read.Error)
		}
		if got.Session != c.want.Session || got.Auth != "Bearer "+c.token {
			t.Errorf("the read went on session %s with %q, want the caller's %s with its own token", got.Session, got.Auth, c.want.Session)
		}
		prompt, _ := s.postWith(t, `{"jsonrpc":"2.0","id":22,"method":"prompts/get","params":{"name":"notes_whoami"}}`, auth)
		if prompt.Error != nil || !strings.Contains(string(prompt.Result), c.want.Session) || !strings.Contains(string(prompt.Result), c.token) {
			t.Errorf("prompts/get did not go on the caller's session with its token: %s %+v", prompt.Result, prompt.Error)
		}
	}

	// Progress of alice's call reaches alice's client under her token.
	cl := g.mcpClient(t, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + alice}))
	var mu sync.Mutex
	var progress []string
	cl.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			mu.Lock()
			progress = append(progress, fmt.Sprint(n.Params.AdditionalFields["progressToken"], " ", n.Params.AdditionalFields["message"]))
			mu.Unlock()
		}
	})
	req := mcp.CallToolRequest{}
	req.Params.Name = "notes_count"
	req.Params.Meta = &mcp.Meta{ProgressToken: "alice-progress"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cl.CallTool(ctx, req)
	if err != nil || len(res.Content) != 1 || !strings.Contains(res.Content[0].(mcp.TextContent).Text, `"n":3`) {
		t.Fatalf("alice's count with progress: %+v %v", res, err)
	}
	waitFor(t, "alice's progress", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(progress) == 1 && progress[0] == "alice-progress counted"
	})

	// A new config: the old one's sessions end; a caller unused for
	// caller_session_idle loses its session.
	if err := g.load(perCallerCaddyfile(idp, up, "credential passthrough", "caller_session_idle 1s")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the replaced config's sessions to end", func() bool { return up.Ended(a1.Session) && up.Ended(b1.Session) })
	a3 := count(alice)
	if a3.Session == a1.Session || a3.N != 1 {
		t.Errorf("alice after the reload: %+v", a3)
	}
	waitFor(t, "alice's idle session to end", func() bool { return up.Ended(a3.Session) })
	if a4 := count(alice); a4.Session == a3.Session || a4.N != 1 {
		t.Errorf("alice after her session went idle: %+v", a4)
	}
}

// TestMCPSourcePerCallerNeedsAuth: `session per_caller` without
// default_auth has no verified caller to key sessions by: the load fails,
// saying so.
func TestMCPSourcePerCallerNeedsAuth(t *testing.T) {
	up := testservices.StartSessionUpstream(t)
	got := loadError(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source notes mcp %s {
			credential bearer list-token
			session per_caller
		}
	}
}`, up.URL))
	if !strings.Contains(got, "session per_caller") || !strings.Contains(got, "no default_auth") {
		t.Errorf("per_caller without auth: %s", got)
	}
}

// TestMCPSourcePerCallerCredential: `credential per_caller` through Caddy:
// each JWT subject's upstream session carries the secret on file for it,
// never another's; a subject with none on file gets -32000 saying so.
func TestMCPSourcePerCallerCredential(t *testing.T) {
	idp := newTestIdP(t)
	up := testservices.StartSessionUpstream(t)
	file := filepath.Join(t.TempDir(), "notes-tokens")
	writeFile(t, file, "alice notes-secret-a\nbob notes-secret-b\n")
	g := startGateway(t, perCallerCaddyfile(idp, up, "credential per_caller bearer {\n\t\t\t\tfile "+file+"\n\t\t\t}", ""))
	call := func(subject string) rpcResponse {
		t.Helper()
		h := map[string]string{"Authorization": "Bearer " + idp.token(t, subject, "", nil, time.Hour)}
		return authSession(t, g, "2025-06-18", h).call(t, "notes_count")
	}
	ra, rb := call("alice"), call("bob")
	if ra.Error != nil || rb.Error != nil {
		t.Fatalf("alice %+v, bob %+v", ra.Error, rb.Error)
	}
	a, b := testservices.ParseCount(t, ra.Result), testservices.ParseCount(t, rb.Result)
	if a.Auth != "Bearer notes-secret-a" || b.Auth != "Bearer notes-secret-b" || a.Session == b.Session {
		t.Errorf("alice %+v, bob %+v", a, b)
	}
	if r := call("carol"); r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "no upstream credential for this caller") {
		t.Errorf("carol: %+v", r.Error)
	}
}

// TestMCPSourceSessionDefault: behind default_auth, an HTTP MCP source
// with no session setting keeps one upstream session per verified caller
// (docs/sources.md, MCP servers), so one caller's upstream state never
// shows to another; `session shared` is the explicit choice of one
// session for every caller.
func TestMCPSourceSessionDefault(t *testing.T) {
	up := testservices.StartSessionUpstream(t)
	t.Setenv("EDGEMCP_TEST_KEY_ALICE", "alice-session-default-key")
	t.Setenv("EDGEMCP_TEST_KEY_BOB", "bob-session-default-key-2")
	conf := func(session string) string {
		return fmt.Sprintf(`SITE {
	mcp /mcp {
		auth keys api_key {
			key {env.EDGEMCP_TEST_KEY_ALICE} {
				subject alice
			}
			key {env.EDGEMCP_TEST_KEY_BOB} {
				subject bob
			}
		}
		default_auth keys
		source notes mcp %s {
			credential bearer list-token
			%s
		}
	}
}`, up.URL, session)
	}
	count := func(g *gateway, key string) testservices.Count {
		t.Helper()
		s := authSession(t, g, "2025-06-18", map[string]string{"X-API-Key": key})
		r := s.call(t, "notes_count")
		if r.Error != nil {
			t.Fatalf("count: %+v", r.Error)
		}
		return testservices.ParseCount(t, r.Result)
	}
	g := startGateway(t, conf(""))
	alice, bob := count(g, "alice-session-default-key"), count(g, "bob-session-default-key-2")
	if alice.Session == bob.Session || alice.N != 1 || bob.N != 1 {
		t.Errorf("default behind default_auth: alice %+v and bob %+v share an upstream session", alice, bob)
	}
	if err := g.load(conf("session shared")); err != nil {
		t.Fatal(err)
	}
	alice, bob = count(g, "alice-session-default-key"), count(g, "bob-session-default-key-2")
	if alice.Session != bob.Session {
		t.Errorf("session shared: alice %+v and bob %+v have sessions of their own", alice, bob)
	}
}

// TestMCPSourceRootsPerCaller: a client's roots reach an upstream session
// of its caller's own (session per_caller) when the server asks during
// the caller's call, and never a session every caller shares
// (docs/sources.md, MCP servers, Roots), where the gateway does not declare roots.
func TestMCPSourceRootsPerCaller(t *testing.T) {
	dir := nodeDir(t)
	up := startConformanceUpstream(t) // its test_roots asks its client for roots
	t.Setenv("EDGEMCP_TEST_KEY_ALICE", "alice-roots-test-key-0001")
	conf := func(session string) string {
		return fmt.Sprintf(`SITE {
	mcp /mcp {
		auth keys api_key {
			key {env.EDGEMCP_TEST_KEY_ALICE} {
				subject alice
			}
		}
		default_auth keys
		source conf mcp %s {
			%s
		}
	}
}`, up, session)
	}
	steps := `{"client": {"roots": [{"uri":"file:///home/alice/project","name":"alice's project"}]},
	"steps": [{"op":"call","name":"conf_test_roots","arguments":{}}]}`
	run := func(g *gateway) string {
		t.Helper()
		out, err := sdkClientRunner(t, dir, g.URL, steps)(map[string]string{"X-API-Key": "alice-roots-test-key-0001"})
		if err != nil {
			t.Fatalf("sdk-client: %v\n%s", err, out)
		}
		return string(out)
	}
	g := startGateway(t, conf("session per_caller"))
	if got := run(g); !strings.Contains(got, "file:///home/alice/project") {
		t.Errorf("per_caller: the caller's roots did not reach its upstream session: %s", got)
	}
	if err := g.load(conf("session shared")); err != nil {
		t.Fatal(err)
	}
	if got := run(g); strings.Contains(got, "file:///home/alice/project") || !strings.Contains(got, "roots are not forwarded") {
		t.Errorf("shared: the server got roots, or no refusal: %s", got)
	}
}
