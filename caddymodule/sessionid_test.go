package caddymodule

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/edgemcp/edgemcp/caddymodule/session"
)

func testKey(c byte) []byte { return []byte(strings.Repeat(string(c), session.MinKeyLen)) }

func sessionCaddyfile(t *testing.T, sites ...string) string {
	seed, _ := filepath.Abs("../examples/data/demo.sql")
	db := filepath.Join(t.TempDir(), "sess.db")
	var b strings.Builder
	for _, site := range sites {
		addr, key, _ := strings.Cut(site, " ")
		fmt.Fprintf(&b, `%s {
	bind 127.0.0.1
	mcp /mcp {
		%s
		connector lite sqlite %q {
			read_only
			seed %q
		}
		tool count-customers {
			description "Counts customers"
			use lite
			statement "SELECT count(*) AS n FROM customers"
		}
	}
}
`, addr, key, db, seed)
	}
	return b.String()
}

// callWith sends a direct-path-eligible tools/call with the given session id
// to url and returns the status and body.
func callWith(t *testing.T, url, session string) (int, string) {
	t.Helper()
	res, body := httpDo(t, "POST", url, map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"},
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count-customers","arguments":{}}}`)
	return res.StatusCode, body
}

func initSession(t *testing.T, url string) string {
	t.Helper()
	res, body := httpDo(t, "POST", url, nil, initializeBody)
	id := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize at %s: %d %q", url, res.StatusCode, body)
	}
	return id
}

// A session id the gateway did not sign gets the answer an unknown session
// gets (404 "Invalid session ID"), on the direct path as through mcp-go, and
// never reaches the tool.
func TestForgedSessionIDsAreUnknown(t *testing.T) {
	g := startGateway(t, sessionCaddyfile(t, "SITE"))
	id := initSession(t, g.URL)
	if status, body := callWith(t, g.URL, id); status != http.StatusOK || !strings.Contains(body, `\"n\":`) {
		t.Fatalf("the issued id: %d %q", status, body)
	}
	reSigned := session.NewIDs([][]byte{testKey('z')}, nil).Generate(session.Owner{})
	_, unknownBody := callWith(t, g.URL, "garbage")
	before := directCount()
	for name, forged := range map[string]string{
		"uuid form":  "mcp-session-" + uuid.NewString(),
		"truncated":  id[:len(id)-2],
		"re-signed":  reSigned,
		"tag of one": strings.SplitN(id, ".", 2)[0] + "." + strings.SplitN(reSigned, ".", 2)[1],
	} {
		status, body := callWith(t, g.URL, forged)
		if status != http.StatusNotFound || body != unknownBody {
			t.Errorf("%s id: %d %q, want 404 %q", name, status, body, unknownBody)
		}
	}
	if n := directCount() - before; n != 0 {
		t.Errorf("the direct path answered %d forged calls", n)
	}
}

// Nodes (here: sites on two ports, each its own handler) that share a
// session_key accept each other's sessions; a different key does not; the
// previous key listed after the new one keeps old sessions during a rotation.
// A DELETE ends the session; ids survive a reload.
func TestSessionKeyShared(t *testing.T) {
	t.Setenv("EDGEMCP_SESSION_KEY_A", string(testKey('k')))
	g := startGateway(t, "")
	ports := []int{g.port, freePort(t), freePort(t), freePort(t)}
	sites := []string{
		fmt.Sprintf("http://:%d session_key {env.EDGEMCP_SESSION_KEY_A}", ports[0]),
		fmt.Sprintf("http://:%d session_key %s", ports[1], testKey('k')),
		fmt.Sprintf("http://:%d session_key %s", ports[2], testKey('o')),
		fmt.Sprintf("http://:%d session_key %s {env.EDGEMCP_SESSION_KEY_A}", ports[3], testKey('n')),
	}
	cfg := sessionCaddyfile(t, sites...)
	if err := g.load(cfg); err != nil {
		t.Fatal(err)
	}
	url := func(i int) string { return fmt.Sprintf("http://127.0.0.1:%d/mcp", ports[i]) }
	id := initSession(t, url(0))
	for i, want := range []int{200, 200, 404, 200} {
		if status, body := callWith(t, url(i), id); status != want {
			t.Errorf("site %d (%s): %d %q, want %d", i, sites[i], status, body, want)
		}
	}
	// A reload (here: the same config again with one change) keeps sessions.
	if err := g.load(strings.Replace(cfg, "Counts customers", "Counts the customers", 1)); err != nil {
		t.Fatal(err)
	}
	if status, body := callWith(t, url(1), id); status != http.StatusOK {
		t.Errorf("after reload: %d %q", status, body)
	}
	res, body := httpDo(t, "DELETE", url(0), map[string]string{"Mcp-Session-Id": id}, "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d %q", res.StatusCode, body)
	}
	if status, body := callWith(t, url(0), id); status != http.StatusNotFound || !strings.Contains(body, "terminated") {
		t.Errorf("after DELETE: %d %q, want 404 Session terminated", status, body)
	}
}
