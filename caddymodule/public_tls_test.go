package caddymodule

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/quic-go/quic-go/http3"
)

// TestPublicExampleTLS runs examples/public/Caddyfile as written, with
// Caddy's internal CA in place of ACME (`tls internal`) and loopback
// ports: mcp-go's client and raw requests over HTTPS on HTTP/1.1, HTTP/2
// and HTTP/3, and the official TypeScript SDK trusting the local CA. The
// protected resource metadata names the https URL.
func TestPublicExampleTLS(t *testing.T) {
	dir := nodeDir(t)
	idp := newTestIdP(t)
	port, httpPort, storage := freePort(t), freePort(t), t.TempDir()
	domain := fmt.Sprintf("localhost:%d", port)
	seed, _ := filepath.Abs("../examples/data/demo.sql")
	for k, v := range map[string]string{
		"MCP_DOMAIN": domain, "ACME_EMAIL": "ops@example.invalid", "JWKS_URL": idp.jwks.URL, "JWT_ISSUER": authIssuer,
		"EDGEMCP_SESSION_KEY": strings.Repeat("s", 40), "DEMO_DB": filepath.Join(t.TempDir(), "demo.db"), "DEMO_SEED": seed,
	} {
		t.Setenv(k, v)
	}
	raw, err := os.ReadFile("../examples/public/Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(string(raw), "\tadmin localhost:2019\n", fmt.Sprintf(
		"\tadmin off\n\tpersist_config off\n\tstorage file_system %s\n\thttps_port %d\n\thttp_port %d\n\tskip_install_trust\n\tlog default {\n\t\toutput discard\n\t}\n",
		storage, port, httpPort), 1)
	cfg = strings.Replace(cfg, "{$MCP_DOMAIN} {\n", "{$MCP_DOMAIN} {\n\ttls internal\n\tbind 127.0.0.1\n", 1)
	if cfg == string(raw) || !strings.Contains(cfg, "tls internal") {
		t.Fatal("the example's Caddyfile no longer has the lines this test adapts")
	}
	g := &gateway{t: t, port: port, globalBlock: "\n"}
	caddyMu.Lock()
	if err := g.load(cfg); err != nil {
		caddyMu.Unlock()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = caddy.Stop(); caddyMu.Unlock() })

	rootFile := filepath.Join(storage, "pki", "authorities", "local", "root.crt")
	var roots *x509.CertPool
	waitFor(t, "the local CA's root certificate", func() bool {
		pem, err := os.ReadFile(rootFile)
		if err != nil {
			return false
		}
		roots = x509.NewCertPool()
		return roots.AppendCertsFromPEM(pem)
	})
	tlsConf := &tls.Config{RootCAs: roots, ServerName: "localhost"}
	clients := map[string]*http.Client{
		"HTTP/1.1": {Transport: &http.Transport{TLSClientConfig: tlsConf.Clone(), TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}},
		"HTTP/2.0": {Transport: &http.Transport{TLSClientConfig: tlsConf.Clone(), ForceAttemptHTTP2: true}},
		"HTTP/3.0": {Transport: &http3.Transport{TLSClientConfig: tlsConf.Clone()}},
	}
	url := "https://" + domain + "/mcp"
	// The certificate is issued in the background after the load.
	waitFor(t, "the site's certificate", func() bool {
		res, err := clients["HTTP/2.0"].Get("https://" + domain + "/.well-known/oauth-protected-resource/mcp")
		if err != nil {
			return false
		}
		res.Body.Close()
		return true
	})

	res, err := clients["HTTP/2.0"].Get("https://" + domain + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Resource string `json:"resource"`
	}
	_ = json.NewDecoder(res.Body).Decode(&meta)
	res.Body.Close()
	if meta.Resource != url {
		t.Errorf("protected resource metadata: resource %q, want %q", meta.Resource, url)
	}

	token := idp.tokenFor(t, "https://"+domain+"/mcp", "alice", "mcp:use", nil, time.Hour)
	for proto, c := range clients {
		post := func(body, session string) (*http.Response, string) {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			if session != "" {
				req.Header.Set("Mcp-Session-Id", session)
			}
			res, err := c.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", proto, err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return res, string(b)
		}
		res, _ := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"tls","version":"1"}}}`, "")
		if res.Proto != proto || res.StatusCode != 200 {
			t.Fatalf("initialize over %s: %s %s", proto, res.Proto, res.Status)
		}
		session := res.Header.Get("Mcp-Session-Id")
		post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
		res, body := post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list-customers","arguments":{"limit":2}}}`, session)
		if res.Proto != proto || !strings.Contains(body, `\"email\"`) {
			t.Errorf("tools/call over %s (%s): %s", proto, res.Proto, body)
		}
	}
	// Without a token: 401 whose challenge points at the https metadata.
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{}`))
	if res, err := clients["HTTP/1.1"].Do(req); err != nil || res.StatusCode != 401 ||
		!strings.Contains(res.Header.Get("WWW-Authenticate"), `resource_metadata="https://`+domain+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Errorf("no token: %v %v", res, err)
	}
	// The catalog over HTTPS: a browser without a token gets the page
	// without tools, its snippets and CSP naming the https URL.
	req, _ = http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/html")
	if res, err := clients["HTTP/2.0"].Do(req); err != nil {
		t.Errorf("catalog: %v", err)
	} else {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		page := string(b)
		if res.StatusCode != 200 || !strings.Contains(page, "&#34;url&#34;: &#34;"+url+"&#34;") || !strings.Contains(page, "This endpoint needs a credential") ||
			strings.Contains(page, "list-customers") || !strings.Contains(res.Header.Get("Content-Security-Policy"), "; script-src "+url+";") {
			t.Errorf("catalog over HTTPS without a token: %d %s\n%s", res.StatusCode, res.Header.Get("Content-Security-Policy"), page)
		}
	}

	// mcp-go's client over HTTPS.
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPBasicClient(clients["HTTP/2.0"]),
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ireq := mcp.InitializeRequest{}
	ireq.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	ireq.Params.ClientInfo = mcp.Implementation{Name: "tls", Version: "1"}
	if _, err := c.Initialize(ctx, ireq); err != nil {
		t.Fatal(err)
	}
	call := mcp.CallToolRequest{}
	call.Params.Name, call.Params.Arguments = "list-customers", map[string]any{"limit": 1}
	if r, err := c.CallTool(ctx, call); err != nil || r.IsError {
		t.Errorf("mcp-go over HTTPS: %v %+v", err, r)
	}

	// The official TypeScript SDK, trusting the local CA.
	t.Setenv("NODE_EXTRA_CA_CERTS", rootFile)
	out, err := sdkClientRunner(t, dir, url, `[{"op":"list"},{"op":"call","name":"list-customers","arguments":{"limit":1}}]`)(
		map[string]string{"Authorization": "Bearer " + token})
	if err != nil {
		t.Fatalf("sdk-client over HTTPS: %v\n%s", err, out)
	}
	var run struct {
		Steps []sdkStep `json:"steps"`
	}
	if err := json.Unmarshal(out, &run); err != nil || len(run.Steps) != 2 || run.Steps[1].Error != nil || run.Steps[1].Result == nil {
		t.Fatalf("sdk-client over HTTPS: %s %v", out, err)
	}
}
