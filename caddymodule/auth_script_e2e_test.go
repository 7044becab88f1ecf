package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Tokens of the script auth test; the test fails if any reaches a log.
const (
	scriptAliceToken = "as-alice-6c1f0e9d8b7a"
	scriptBobToken   = "as-bob-2d4f6a8c0e1b"
	scriptOpsKey     = "as-ops-key-9a8b7c6d5e4f"
)

// scriptAuthJS decides per tool: every caller needs a known bearer token
// (endpoint layer, tool ""); ops-only admits alice alone; the keyed tool
// checks X-Ops-Key and, with a wrong key, hits a bug that makes the
// runtime quote the header value, which must not reach the caller.
const scriptAuthJS = `const users = {
	'` + scriptAliceToken + `': {subject: 'alice', claims: {scope: 'mcp:use', tenant: 'acme'}},
	'` + scriptBobToken + `': {subject: 'bob', claims: {scope: 'mcp:use', tenant: 'globex'}},
}
export function gate({headers, tool, remote_addr}) {
	const auth = headers.authorization ?? ''
	if (!auth.startsWith('Bearer ')) throw new Error('bearer token required')
	const user = users[auth.slice(7)]
	if (!user) throw new Error('unknown token')
	if (!remote_addr.startsWith('127.0.0.1:')) throw new Error('local callers only')
	if (tool === 'ops-only' && user.subject !== 'alice') throw new Error('ops tools are for alice only')
	return user
}
export function opsKey({headers}) {
	const key = headers['x-ops-key']
	if (key === undefined) throw new Error('X-Ops-Key required')
	if (key !== '` + scriptOpsKey + `') key() // a bug: TypeError quoting the key
	return {subject: 'ops'}
}`

// scriptAuthCaddyfile: default_auth by script, a tool whose answer the
// script gives per tool, a tool with a claim policy on the script's
// identity, a second script provider for one tool, and a script handler
// that holds its runtime in a fetch (for the pool gauges).
func scriptAuthCaddyfile(t *testing.T, dir, holdHost string) string {
	seed, _ := filepath.Abs("../examples/data/demo.sql")
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		connector lite sqlite %s {
			read_only
			seed %s
		}
		auth gate script {
			file %s#gate
			timeout 2s
			authorization_server https://login.auth-script.example/
		}
		auth ops script {
			file %s#opsKey
		}
		default_auth gate {
			scope mcp:use
		}
		tool public-info {
			description "Counts customers"
			use lite
			statement "SELECT count(*) AS n FROM customers"
		}
		tool ops-only {
			description "Counts orders"
			use lite
			statement "SELECT count(*) AS n FROM orders"
			auth gate
		}
		tool acme-report {
			description "Lists products"
			use lite
			statement "SELECT id FROM products ORDER BY id LIMIT 1"
			auth gate {
				claim tenant acme
			}
		}
		tool ops-key {
			description "Needs the ops key"
			handler %s
			auth ops
		}
		tool hold {
			description "Waits for the test's server, says who called"
			handler %s
			fetch_allow %s
			script_timeout 10s
		}
	}
}`, filepath.Join(t.TempDir(), "demo.db"), seed,
		filepath.Join(dir, "auth.js"), filepath.Join(dir, "auth.js"),
		filepath.Join(dir, "ops.js"), filepath.Join(dir, "hold.js"), holdHost)
}

func TestAuthScriptEndToEnd(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	hold := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		_, _ = w.Write([]byte("released"))
	}))
	defer hold.Close()
	holdHost := strings.TrimPrefix(hold.URL, "http://")
	dir := scriptFiles(t, map[string]string{
		"auth.js": scriptAuthJS,
		"ops.js":  `export default ({auth}) => ({ok: true, subject: auth.subject})`,
		"hold.js": `export default async ({auth}) => ({said: await (await fetch('` + hold.URL + `')).text(), subject: auth.subject})`,
	})
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	adminAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	g := startGateway(t, scriptAuthCaddyfile(t, dir, holdHost), func(g *gateway) {
		g.globalBlock = fmt.Sprintf("{\n\tadmin %s\n\tpersist_config off\n\tlog default {\n\t\toutput file %s\n\t\tlevel DEBUG\n\t}\n}\n", adminAddr, logFile)
	})
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

	t.Run("endpoint layer: 401 with the challenge and the script's reason", func(t *testing.T) {
		for _, c := range []struct {
			header map[string]string
			reason string
		}{
			{nil, "bearer token required"},
			{bearer("as-nobody-000000000000"), "unknown token"},
		} {
			res, body := httpDo(t, http.MethodPost, g.URL, c.header, initializeBody)
			www := res.Header.Get("WWW-Authenticate")
			if res.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(www, `Bearer resource_metadata="http://127.0.0.1:`) ||
				!strings.Contains(www, `error_description="`+c.reason+`"`) {
				t.Errorf("%v: %d %q %s", c.header, res.StatusCode, www, body)
			}
			if strings.Contains(body+www, "as-nobody") {
				t.Errorf("the refusal echoes the token: %q %s", www, body)
			}
		}
		if _, err := newMCPGoClient(g.URL, nil); err == nil {
			t.Errorf("an mcp-go client without a token was let in")
		}
		res, body := httpDo(t, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/.well-known/oauth-protected-resource/mcp", g.port), nil, "")
		var meta struct {
			AuthorizationServers []string `json:"authorization_servers"`
			ScopesSupported      []string `json:"scopes_supported"`
		}
		if res.StatusCode != 200 || json.Unmarshal([]byte(body), &meta) != nil ||
			!slices.Equal(meta.AuthorizationServers, []string{"https://login.auth-script.example/"}) || !slices.Contains(meta.ScopesSupported, "mcp:use") {
			t.Errorf("metadata: %d %s", res.StatusCode, body)
		}
	})

	t.Run("tools/list asks the script per tool", func(t *testing.T) {
		for _, c := range []struct {
			token string
			want  []string
		}{
			{scriptAliceToken, []string{"acme-report", "hold", "ops-only", "public-info"}},
			{scriptBobToken, []string{"hold", "public-info"}},
		} {
			if names := listedTools(t, g.URL, bearer(c.token)); !slices.Equal(names, c.want) {
				t.Errorf("tools %v, want %v", names, c.want)
			}
		}
	})

	t.Run("tool layer: -32000 with the script's reason, never the key", func(t *testing.T) {
		alice := authSession(t, g, "2025-06-18", bearer(scriptAliceToken))
		bob := authSession(t, g, "2025-06-18", bearer(scriptBobToken))
		if rows := alice.call(t, "ops-only").tool(t).rows(t); len(rows) != 1 {
			t.Errorf("alice ops-only: %v", rows)
		}
		if rows := alice.call(t, "acme-report").tool(t).rows(t); len(rows) != 1 {
			t.Errorf("alice acme-report: %v", rows)
		}
		for _, c := range []struct {
			s     *authRawSession
			tool  string
			extra map[string]string
			want  string
		}{
			{bob, "ops-only", nil, "authentication: invalid credentials: ops tools are for alice only"},
			{bob, "acme-report", nil, "authentication: not permitted to call this tool"},
			{alice, "ops-key", nil, "authentication: invalid credentials: X-Ops-Key required"},
			{alice, "ops-key", map[string]string{"X-Ops-Key": "as-wrong-key-1234567890"}, "authentication: invalid credentials: TypeError: Value is not an object: [redacted]"},
		} {
			resp := c.s.callWith(t, c.tool, c.extra)
			if resp.Error == nil || resp.Error.Code != -32000 || resp.Error.Message != c.want {
				t.Errorf("%s %v: got %+v %s, want -32000 %q", c.tool, c.extra, resp.Error, resp.Result, c.want)
			}
		}
		ok := alice.callWith(t, "ops-key", map[string]string{"X-Ops-Key": scriptOpsKey})
		var got map[string]any
		if tr := ok.tool(t); len(tr.Content) != 1 || json.Unmarshal([]byte(tr.Content[0].Text), &got) != nil || got["subject"] != "ops" {
			t.Errorf("ops-key with the key: %+v", tr)
		}
	})

	t.Run("script pools are exposed as metrics", func(t *testing.T) {
		admin := "http://" + adminAddr
		inUse := `edgemcp_script_pool_in_use_runtimes{pool="hold handler"}`
		before := scrape(t, admin)
		for _, series := range []string{
			`edgemcp_script_pool_max_runtimes{pool="auth gate"}`, `edgemcp_script_pool_max_runtimes{pool="auth ops"}`,
			`edgemcp_script_pool_max_runtimes{pool="ops-key handler"}`, `edgemcp_script_pool_waits_total{pool="auth gate"}`,
			inUse,
		} {
			if _, ok := before[series]; !ok {
				t.Errorf("no series %s", series)
			}
		}
		if before[`edgemcp_script_pool_max_runtimes{pool="auth gate"}`] < 1 || before[inUse] != 0 {
			t.Errorf("before the call: max %v, in use %v", before[`edgemcp_script_pool_max_runtimes{pool="auth gate"}`], before[inUse])
		}

		s := authSession(t, g, "2025-06-18", bearer(scriptBobToken))
		var wg sync.WaitGroup
		var result string
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := s.call(t, "hold")
			if resp.Error != nil {
				t.Errorf("hold: %+v", resp.Error)
				return
			}
			result = string(resp.Result)
		}()
		select {
		case <-arrived:
		case <-time.After(10 * time.Second):
			t.Fatal("the hold handler never fetched")
		}
		during := scrape(t, admin)
		close(release)
		wg.Wait()
		after := scrape(t, admin)
		if during[inUse] != 1 || after[inUse] != 0 {
			t.Errorf("%s: %v during the call, %v after, want 1 then 0", inUse, during[inUse], after[inUse])
		}
		if !strings.Contains(result, "released") || !strings.Contains(result, "bob") {
			t.Errorf("hold result %s", result)
		}
	})

	assertLogsClean(t, logFile, []string{scriptAliceToken, scriptBobToken, scriptOpsKey, "as-wrong-key-1234567890", "as-nobody-000000000000"})
}

// listedTools is the sorted tools/list of an mcp-go client sending header.
func listedTools(t *testing.T, url string, header map[string]string) []string {
	t.Helper()
	cl, err := newMCPGoClient(url, header)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	res, err := cl.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}
