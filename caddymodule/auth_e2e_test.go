package caddymodule

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// The auth tests run the real Caddy with a local identity provider (a JWKS
// endpoint serving an ES256 key made here) and real MCP clients.

const (
	authIssuer   = "https://idp.auth-test.example/"
	authAudience = "https://gateway.auth-test.example/mcp"
	authAPIKey   = "auth-test-api-key-7f3a9c1e5b2d"
)

// testIdP signs tokens and serves its public key as a JWKS.
type testIdP struct {
	key  *ecdsa.PrivateKey
	jwks *httptest.Server
}

func newTestIdP(t testing.TB) *testIdP {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	idp := &testIdP{key: key}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: key.Public(), KeyID: "auth-test", Algorithm: "ES256", Use: "sig"}}}
	idp.jwks = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(idp.jwks.Close)
	return idp
}

// defaultAuth is the Caddyfile lines that make idp the endpoint's
// default_auth (provider sso), for an mcp block.
func (idp *testIdP) defaultAuth() string {
	return fmt.Sprintf("auth sso jwt {\n\t\t\tjwks_url %s\n\t\t\tissuer %s\n\t\t\taudience %s\n\t\t}\n\t\tdefault_auth sso",
		idp.jwks.URL, authIssuer, authAudience)
}

// token signs a token for subject with the given scopes and claims;
// ttl < 0 makes an expired token.
func (idp *testIdP) token(t testing.TB, subject, scope string, extra map[string]any, ttl time.Duration) string {
	t.Helper()
	return idp.tokenFor(t, authAudience, subject, scope, extra, ttl)
}

// tokenFor is token for another audience.
func (idp *testIdP) tokenFor(t testing.TB, audience, subject, scope string, extra map[string]any, ttl time.Duration) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: idp.key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "auth-test"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	claims := map[string]any{"scope": scope}
	for k, v := range extra {
		claims[k] = v
	}
	tok, err := jwt.Signed(signer).Claims(jwt.Claims{
		Issuer: authIssuer, Subject: subject, Audience: jwt.Audience{audience},
		IssuedAt: jwt.NewNumericDate(now.Add(-time.Minute)), Expiry: jwt.NewNumericDate(now.Add(ttl)),
	}).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// authCaddyfile: the endpoint needs a JWT with scope mcp:use; tools add
// their own policies, one uses an API key.
func authCaddyfile(t testing.TB, idp *testIdP, withDefault bool) string {
	seed, _ := filepath.Abs("../examples/data/demo.sql")
	def := ""
	if withDefault {
		def = "default_auth sso {\n\t\t\tscope mcp:use\n\t\t}"
	}
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		name auth-gateway
		connector lite sqlite %s {
			read_only
			seed %s
		}
		auth sso jwt {
			jwks_url %s
			issuer %s
			audience %s
		}
		auth keys api_key {
			key {env.EDGEMCP_AUTH_TEST_KEY} {
				subject ci-bot
				scope reports:read
			}
		}
		%s
		tool public-info {
			description "Counts customers"
			use lite
			statement "SELECT count(*) AS n FROM customers"
		}
		tool read-customers {
			description "Lists customers"
			use lite
			statement "SELECT id, name FROM customers ORDER BY id LIMIT 2"
			auth sso {
				scope customers:read
			}
		}
		tool admin-only {
			description "Lists products"
			use lite
			statement "SELECT id FROM products ORDER BY id LIMIT 1"
			auth sso {
				claim role admin
			}
		}
		tool key-report {
			description "Counts orders"
			use lite
			statement "SELECT count(*) AS n FROM orders"
			auth keys {
				scope reports:read
			}
		}
	}
}`, filepath.Join(t.TempDir(), "demo.db"), seed, idp.jwks.URL, authIssuer, authAudience, def)
}

// withLogFile makes the gateway write every log line, debug included, to path.
func withLogFile(path string) func(*gateway) {
	return func(g *gateway) {
		g.globalBlock = fmt.Sprintf("{\n\tadmin off\n\tpersist_config off\n\tlog default {\n\t\toutput file %s\n\t\tlevel DEBUG\n\t}\n}\n", path)
	}
}

func httpDo(t testing.TB, method, url string, header map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res, string(raw)
}

const initializeBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func TestAuthEndpointLayer(t *testing.T) {
	t.Setenv("EDGEMCP_AUTH_TEST_KEY", authAPIKey)
	idp := newTestIdP(t)
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	g := startGateway(t, authCaddyfile(t, idp, true), withLogFile(logFile))
	origin := fmt.Sprintf("http://127.0.0.1:%d", g.port)
	metadataURL := origin + "/.well-known/oauth-protected-resource/mcp"

	good := idp.token(t, "alice", "mcp:use customers:read", nil, time.Hour)
	expired := idp.token(t, "alice", "mcp:use", nil, -time.Hour)
	noScope := idp.token(t, "alice", "customers:read", nil, time.Hour)
	otherKey := (&testIdP{key: must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))}).token(t, "alice", "mcp:use", nil, time.Hour)
	secrets := []string{good, expired, noScope, otherKey, authAPIKey}

	cases := []struct {
		name      string
		auth      string
		status    int
		challenge []string // parts the WWW-Authenticate header must hold
	}{
		{"no credentials", "", 401, []string{`Bearer resource_metadata="` + metadataURL + `"`, `scope="mcp:use"`}},
		{"expired token", "Bearer " + expired, 401, []string{`resource_metadata="` + metadataURL + `"`, `error="invalid_token"`, `error_description="token expired"`}},
		{"token signed by another key", "Bearer " + otherKey, 401, []string{`error="invalid_token"`, `error_description="bad signature"`}},
		{"an API key is not a token", "Bearer " + authAPIKey, 401, []string{`error="invalid_token"`}},
		{"token without the endpoint scope", "Bearer " + noScope, 403, []string{`error="insufficient_scope"`, `scope="mcp:use"`, `resource_metadata=`}},
		{"valid token", "Bearer " + good, 200, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{}
			if c.auth != "" {
				hdr["Authorization"] = c.auth
			}
			res, body := httpDo(t, http.MethodPost, g.URL, hdr, initializeBody)
			if res.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, c.status, body)
			}
			www := res.Header.Get("WWW-Authenticate")
			for _, part := range c.challenge {
				if !strings.Contains(www, part) {
					t.Errorf("WWW-Authenticate %q lacks %q", www, part)
				}
			}
			for _, s := range secrets {
				if strings.Contains(body, s) || strings.Contains(www, s) {
					t.Errorf("the answer repeats a credential")
				}
			}
		})
	}

	t.Run("metadata document", func(t *testing.T) {
		for _, url := range []string{metadataURL, origin + "/.well-known/oauth-protected-resource"} {
			res, body := httpDo(t, http.MethodGet, url, nil, "")
			if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("%s: %d %s", url, res.StatusCode, body)
			}
			var doc struct {
				Resource             string   `json:"resource"`
				AuthorizationServers []string `json:"authorization_servers"`
				ScopesSupported      []string `json:"scopes_supported"`
				BearerMethods        []string `json:"bearer_methods_supported"`
				ResourceName         string   `json:"resource_name"`
			}
			if err := json.Unmarshal([]byte(body), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Resource != g.URL || !slices.Equal(doc.AuthorizationServers, []string{authIssuer}) ||
				!slices.Equal(doc.ScopesSupported, []string{"customers:read", "mcp:use"}) ||
				!slices.Equal(doc.BearerMethods, []string{"header"}) || doc.ResourceName != "auth-gateway" {
				t.Errorf("%s: %+v", url, doc)
			}
		}
	})

	t.Run("mcp-go client without credentials discovers the metadata", func(t *testing.T) {
		c, err := newMCPGoClient(g.URL, nil)
		if err == nil {
			_ = c.Close()
			t.Fatal("initialize without credentials succeeded")
		}
		var are *transport.AuthorizationRequiredError
		if !errors.As(err, &are) || are.ResourceMetadataURL != metadataURL {
			t.Fatalf("want AuthorizationRequiredError naming %s, got %v", metadataURL, err)
		}
	})

	assertLogsClean(t, logFile, secrets)
}

func TestAuthToolLayer(t *testing.T) {
	t.Setenv("EDGEMCP_AUTH_TEST_KEY", authAPIKey)
	idp := newTestIdP(t)
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	g := startGateway(t, authCaddyfile(t, idp, true), withLogFile(logFile))
	reader := idp.token(t, "alice", "mcp:use customers:read", map[string]any{"role": "user"}, time.Hour)
	admin := idp.token(t, "root", "mcp:use", map[string]any{"role": "admin"}, time.Hour)
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	withKey := func(tok string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + tok, "X-API-Key": authAPIKey}
	}

	t.Run("tools/list shows only callable tools", func(t *testing.T) {
		for _, c := range []struct {
			header map[string]string
			want   []string
		}{
			{bearer(reader), []string{"public-info", "read-customers"}},
			{bearer(admin), []string{"admin-only", "public-info"}},
			{withKey(reader), []string{"key-report", "public-info", "read-customers"}},
		} {
			if names := listedTools(t, g.URL, c.header); !slices.Equal(names, c.want) {
				t.Errorf("tools %v, want %v", names, c.want)
			}
		}
	})

	// Both paths must run the auth stage: the direct path (plain JSON
	// call) and mcp-go's dispatcher (a call with _meta goes there).
	for _, viaMCPGo := range []bool{false, true} {
		t.Run(fmt.Sprintf("calls, via mcp-go %v", viaMCPGo), func(t *testing.T) {
			s := authSession(t, g, "2025-06-18", bearer(reader))
			s.meta = viaMCPGo
			directBefore := directCount()
			if rows := s.call(t, "read-customers").tool(t).rows(t); len(rows) != 2 {
				t.Errorf("read-customers rows %v", rows)
			}
			for _, tool := range []string{"admin-only", "key-report"} {
				resp := s.call(t, tool)
				if resp.Error == nil || resp.Error.Code != -32000 {
					t.Fatalf("%s: want -32000, got %+v %s", tool, resp.Error, resp.Result)
				}
				want := map[string]string{
					"admin-only": "authentication: not permitted to call this tool",
					"key-report": "authentication: credentials required",
				}[tool]
				if resp.Error.Message != want {
					t.Errorf("%s: message %q, want %q", tool, resp.Error.Message, want)
				}
			}
			if direct := directCount() - directBefore; viaMCPGo != (direct == 0) || (!viaMCPGo && direct != 3) {
				t.Errorf("%d calls answered directly (via mcp-go: %v)", direct, viaMCPGo)
			}
			wrongKey := s.callWith(t, "key-report", map[string]string{"X-API-Key": "wrong-key-0000000000000000"})
			if wrongKey.Error == nil || wrongKey.Error.Code != -32000 || wrongKey.Error.Message != "authentication: invalid credentials: unknown API key" {
				t.Errorf("wrong key: %+v", wrongKey.Error)
			}
			ok := s.callWith(t, "key-report", map[string]string{"X-API-Key": authAPIKey})
			if rows := ok.tool(t).rows(t); len(rows) != 1 {
				t.Errorf("key-report rows %v", rows)
			}
		})
	}

	t.Run("mcp-go client call refused without revealing the policy", func(t *testing.T) {
		cl, err := newMCPGoClient(g.URL, bearer(reader))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		req := mcp.CallToolRequest{}
		req.Params.Name = "admin-only"
		_, err = cl.CallTool(context.Background(), req)
		if err == nil || !strings.Contains(err.Error(), "not permitted to call this tool") ||
			strings.Contains(err.Error(), "role") || strings.Contains(err.Error(), "admin ") {
			t.Fatalf("got %v", err)
		}
	})

	assertLogsClean(t, logFile, []string{reader, admin, authAPIKey})
}

// TestAuthToolLayerWithoutDefault: with no default_auth the endpoint is
// open, tools without auth are callable by anyone, and the keyed tool is
// hidden from and refused to callers without the key.
func TestAuthToolLayerWithoutDefault(t *testing.T) {
	t.Setenv("EDGEMCP_AUTH_TEST_KEY", authAPIKey)
	idp := newTestIdP(t)
	g := startGateway(t, authCaddyfile(t, idp, false))
	res, body := httpDo(t, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/.well-known/oauth-protected-resource", g.port), nil, "")
	if strings.Contains(body, "resource") {
		t.Errorf("metadata served without default_auth: %d %s", res.StatusCode, body)
	}
	s := authSession(t, g, "2025-06-18", nil)
	if rows := s.call(t, "public-info").tool(t).rows(t); len(rows) != 1 {
		t.Errorf("public-info %v", rows)
	}
	resp := s.call(t, "key-report")
	if resp.Error == nil || resp.Error.Code != -32000 || resp.Error.Message != "authentication: credentials required" {
		t.Errorf("key-report without key: %+v", resp.Error)
	}
	cl, err := newMCPGoClient(g.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	list, err := cl.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil || len(list.Tools) != 1 || list.Tools[0].Name != "public-info" {
		t.Fatalf("anonymous tools/list: %+v %v", list, err)
	}
}

// authSession is a raw JSON-RPC session whose requests carry header.
type authRawSession struct {
	*rawSession
	header map[string]string
	meta   bool // send "_meta": {} so that mcp-go, not the direct path, answers
}

func authSession(t testing.TB, g *gateway, version string, header map[string]string) *authRawSession {
	t.Helper()
	s := &authRawSession{rawSession: &rawSession{url: g.URL, version: version}, header: header}
	resp, hdr := s.postWith(t, strings.Replace(initializeBody, "2025-06-18", version, 1), header)
	if resp.Error != nil || resp.Status != 200 {
		t.Fatalf("initialize: %d %+v", resp.Status, resp.Error)
	}
	s.session = hdr.Get("Mcp-Session-Id")
	s.postWith(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, header)
	return s
}

func (s *authRawSession) call(t testing.TB, tool string) rpcResponse {
	t.Helper()
	return s.callWith(t, tool, nil)
}

// callWith calls tool with no arguments, adding extra headers.
func (s *authRawSession) callWith(t testing.TB, tool string, extra map[string]string) rpcResponse {
	t.Helper()
	h := map[string]string{}
	for k, v := range s.header {
		h[k] = v
	}
	for k, v := range extra {
		h[k] = v
	}
	s.nextID++
	meta := ""
	if s.meta {
		meta = `,"_meta":{}`
	}
	resp, _ := s.postWith(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}%s}}`, s.nextID, tool, meta), h)
	return resp
}

// assertLogsClean reads the gateway's complete log (debug level) and fails
// when any credential used in the test appears in it.
func assertLogsClean(t *testing.T, path string, secrets []string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("log file: %v", err)
	}
	if !strings.Contains(string(raw), "mcp endpoint refused request") && !strings.Contains(string(raw), "tool call") {
		t.Fatalf("the log capture caught nothing (%d bytes): the check would be vacuous", len(raw))
	}
	for _, s := range secrets {
		if strings.Contains(string(raw), s) || strings.Contains(string(raw), s[:len(s)/2]) {
			t.Errorf("a credential appears in the logs")
		}
	}
}

// newMCPGoClient opens an initialized mcp-go client session that sends
// header with every request; the error of a refused initialize is returned.
func newMCPGoClient(url string, header map[string]string) (*client.Client, error) {
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(header))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "edgemcp-auth-test", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestAuthBasicEndpoint: basic as default_auth answers with a Basic
// challenge too, and admits the bcrypt user.
func TestAuthBasicEndpoint(t *testing.T) {
	hash := "$2a$04$r3DIadS6pCEACIbNQqTEZeSrvyMwHCvji44hcqxX1lB4CyozOWvpm" // bcrypt("open sesame"), cost 4
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		auth ops basic {
			realm ops
			alice %s
		}
		default_auth ops
	}
}`, hash))
	res, body := httpDo(t, http.MethodPost, g.URL, nil, initializeBody)
	www := res.Header.Values("WWW-Authenticate")
	if res.StatusCode != 401 || len(www) != 2 || www[0] != `Basic realm="ops", charset="UTF-8"` || !strings.HasPrefix(www[1], "Bearer resource_metadata=") {
		t.Fatalf("%d %q %s", res.StatusCode, www, body)
	}
	res, body = httpDo(t, http.MethodPost, g.URL, map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:open sesame"))}, initializeBody)
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	res, _ = httpDo(t, http.MethodPost, g.URL, map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:wrong"))}, initializeBody)
	if res.StatusCode != 401 {
		t.Fatalf("wrong password: %d", res.StatusCode)
	}
}
