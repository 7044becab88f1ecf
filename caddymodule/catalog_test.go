package caddymodule

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/auth"
	"github.com/edgemcp/edgemcp/pipeline"
)

func TestWantsHTML(t *testing.T) {
	for _, tc := range []struct {
		accept string
		want   bool
	}{
		{"text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8", true}, // Chromium, Firefox
		{"text/html", true},
		{"application/xhtml+xml", true},
		{"TEXT/HTML; charset=utf-8", true},
		{"text/html;q=0", false},
		{"text/event-stream", false},
		{"text/html, text/event-stream", false}, // an MCP client's GET stream
		{"application/json, text/event-stream", false},
		{"*/*", false}, // curl
		{"", false},
		{"text/html;q=bogus", true},
		{";;;", false},
	} {
		if got := wantsHTML(tc.accept); got != tc.want {
			t.Errorf("wantsHTML(%q) = %v, want %v", tc.accept, got, tc.want)
		}
	}
}

type nopExecutor struct{}

func (nopExecutor) Execute(context.Context, *pipeline.Call) (*pipeline.Result, error) {
	return &pipeline.Result{}, nil
}

type anyCaller struct{}

func (anyCaller) Authorize(context.Context, *pipeline.Call) (*pipeline.Identity, error) {
	return &pipeline.Identity{Subject: "x"}, nil
}

// The page is built from the engine's tools: badges from Auth and the
// annotations, raw schemas (proxied tools) listed too, everything escaped.
func TestCatalogRender(t *testing.T) {
	yes := true
	def := "7"
	limit, err := pipeline.NewInput(pipeline.InputSpec{Name: "limit", Type: "int", Default: &def, Description: "At most <b>this</b> many"})
	if err != nil {
		t.Fatal(err)
	}
	inputs, _ := pipeline.NewInputSet([]*pipeline.Input{limit})
	engine, err := pipeline.NewEngine([]*pipeline.Tool{
		{Name: "secured", Title: "Secured tool", Description: `Reads <script>alert("x")</script> rows`, Inputs: inputs,
			Auth: anyCaller{}, Annotations: pipeline.Annotations{ReadOnly: &yes, Idempotent: &yes}, Executor: nopExecutor{},
			FromIdentity: []string{"auth.claims.tenant", "auth.subject", "auth.claims (claims_setting request.jwt.claims)"}},
		{Name: "proxied", Description: "From a spec", Executor: nopExecutor{},
			InputSchema: []byte(`{"type":"object","properties":{"q":{"type":"string","description":"Query"},"n":{"type":"integer","enum":[1,2]}},"required":["q"]}`),
			Annotations: pipeline.Annotations{Destructive: &yes}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := &Handler{ServerName: "render-test", ServerVersion: "9.9.9", logger: zap.NewNop()}
	h.setTools(&registry{engine: engine})
	req := httptest.NewRequest(http.MethodGet, "http://gw.example/mcp", nil)
	req.Header.Set("Accept", "text/html")
	rec := httptest.NewRecorder()
	if !h.serveCatalog(rec, req, false) {
		t.Fatal("catalog not served")
	}
	body := rec.Body.String()
	for _, want := range []string{
		"render-test", "v9.9.9", "http://gw.example/mcp", "2 tools",
		`id="tool-secured"`, "Secured tool", `badge-auth`, ">auth<", ">read-only<", ">idempotent<",
		">identity<", "never an argument: auth.claims.tenant, auth.subject, auth.claims\"",
		"Reads &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; rows", "At most &lt;b&gt;this&lt;/b&gt; many",
		`<span class="type">int</span>`, "default <code>7</code>",
		`id="tool-proxied"`, ">destructive<", "<code>q</code>", `<span class="type">string</span>`, "Query",
		`<span class="type">integer</span>`, "one of <code>1</code> <code>2</code>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>") {
		t.Error("page contains an unescaped script tag")
	}
	// q is required, n is not, in the raw-schema tool.
	if i, j := strings.Index(body, "<code>q</code>"), strings.Index(body, "<code>n</code>"); i < 0 || j < 0 ||
		!strings.Contains(body[j:], "optional") || !strings.Contains(body[i:], "required") {
		t.Error("required/optional of the raw schema inputs not shown")
	}
	if got := rec.Header().Get("Content-Security-Policy"); !strings.HasPrefix(got, "default-src 'none'; style-src 'sha256-") ||
		!strings.Contains(got, "; script-src http://gw.example/mcp; connect-src http://gw.example/mcp;") {
		t.Errorf("CSP %q", got)
	}
	// The snippets, the try-it forms with their schemas, the script by
	// integrity; no credential panel on an endpoint without auth.
	for _, want := range []string{
		`<code id="config-vscode">`, `&#34;url&#34;: &#34;http://gw.example/mcp&#34;`, `<code id="config-inspector">npx @modelcontextprotocol/inspector --cli http://gw.example/mcp`,
		`<form class="try-form" data-tool="proxied" data-schema="{&#34;type&#34;:&#34;object&#34;,&#34;properties&#34;:{&#34;q&#34;:`,
		`<script src="/mcp?catalog=script.js" integrity="sha256-`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, `id="credential"`) || strings.Contains(body, "data-cred-header") {
		t.Error("credential panel on an endpoint without auth")
	}
}

// The header a credential goes in: default_auth's provider, else the first
// declared one.
func TestCredentialOf(t *testing.T) {
	keys := &auth.APIKey{Header: "X-API-Key"}
	bearerKeys := &auth.APIKey{Header: "Authorization"}
	for _, tc := range []struct {
		name      string
		declared  []string
		providers map[string]pipeline.AuthProvider
		def       string
		want      *credential
	}{
		{name: "no auth"},
		{name: "api key header", declared: []string{"k"}, providers: map[string]pipeline.AuthProvider{"k": keys}, want: &credential{Header: "X-Api-Key"}},
		{name: "api key as bearer", declared: []string{"k"}, providers: map[string]pipeline.AuthProvider{"k": bearerKeys}, want: &credential{"Authorization", "Bearer "}},
		{name: "jwt", declared: []string{"j"}, providers: map[string]pipeline.AuthProvider{"j": &auth.JWT{}}, want: &credential{"Authorization", "Bearer "}},
		{name: "basic", declared: []string{"b"}, providers: map[string]pipeline.AuthProvider{"b": &auth.Basic{}}, want: &credential{"Authorization", "Basic "}},
		{name: "default_auth wins over the first", declared: []string{"k", "j"}, def: "j",
			providers: map[string]pipeline.AuthProvider{"k": keys, "j": &auth.JWT{}}, want: &credential{"Authorization", "Bearer "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &Handler{}
			for _, n := range tc.declared {
				h.Auth = append(h.Auth, AuthProviderConfig{Name: n})
			}
			h.providers = tc.providers
			if tc.def != "" {
				h.DefaultAuth = &DefaultAuthConfig{AuthPolicyConfig: AuthPolicyConfig{Use: tc.def}}
			}
			got := h.credentialOf()
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("credentialOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// The catalog on a running gateway (Caddyfile.example): every tool, its
// inputs and types; no connector, path or statement; `catalog off` leaves
// GET to the MCP transport.
func TestCatalogGateway(t *testing.T) {
	src := exampleGatewayCaddyfile(t)
	g := startGateway(t, src)

	get := func(accept, host string) (int, http.Header, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, g.URL, nil)
		req.Header.Set("Accept", accept)
		if host != "" {
			req.Host = host
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			return res.StatusCode, res.Header, "" // the MCP transport's notification stream: open-ended
		}
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(b)
	}
	const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	status, hdr, body := get(browser, "")
	if status != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Fatalf("GET as a browser: %d %s\n%s", status, hdr.Get("Content-Type"), body)
	}
	for _, want := range []string{
		"edgemcp-demo", "5 tools", "get-customer", "Fetch one customer by id", "customer_id", ">int<", "The customer&#39;s id",
		"search-products", "<code>hardware</code>", "customer-orders", ">datetime<", "2024-01-01T00:00:00Z", ">read-only<",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, hidden := range []string{"demo.db", "sqlite", "SELECT", "demo.sql"} {
		if strings.Contains(body, hidden) {
			t.Errorf("page shows %q", hidden)
		}
	}
	if hdr.Get("Cache-Control") != "private, no-store" || hdr.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers: %v", hdr)
	}
	// An MCP client's GET, and a request through a rebinding DNS name.
	if status, hdr, _ := get("text/event-stream", ""); strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Errorf("GET text/event-stream got the page (%d)", status)
	}
	if status, _, _ := get(browser, "attacker.example"); status != http.StatusForbidden {
		t.Errorf("GET with a foreign Host on loopback: %d, want 403", status)
	}
	plainStatus, _, plainBody := get("*/*", "")
	script := func() (int, string) {
		t.Helper()
		res, err := http.Get(g.URL + "?" + catalogScriptQuery)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close() // unread: with catalog off this may be the transport's open-ended stream
		return res.StatusCode, res.Header.Get("Content-Type")
	}
	if status, ct := script(); status != http.StatusOK || ct != "text/javascript; charset=utf-8" {
		t.Errorf("the page's script: %d %s", status, ct)
	}

	// catalog off: a browser's GET gets what any other GET gets.
	if err := g.load(strings.Replace(src, "version 1.0.0", "version 1.0.0\n\t\tcatalog off", 1)); err != nil {
		t.Fatal(err)
	}
	status, hdr, body = get(browser, "")
	if strings.HasPrefix(hdr.Get("Content-Type"), "text/html") || status != plainStatus || body != plainBody {
		t.Errorf("catalog off: GET as a browser got %d %q %q, a plain GET %d %q", status, hdr.Get("Content-Type"), body, plainStatus, plainBody)
	}
	if _, ct := script(); ct == "text/javascript; charset=utf-8" {
		t.Error("catalog off: the script is still served")
	}
}

// The page lists only the tools the caller may call (the same check as
// tools/list), and shows each tool's cache policy as a badge.
func TestCatalogFollowsAuthAndCache(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cat.db")
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		connector demo sqlite %q
		auth keys api_key {
			key catalog-test-key-0123456789 {
				subject ops
				scope reports:read
			}
		}
		tool public-time {
			description "The database's clock"
			use demo
			statement "SELECT datetime('now') AS now"
			cache 60s
		}
		tool private-report {
			description "Needs the reports scope"
			use demo
			statement "SELECT 1 AS n"
			auth keys {
				scope reports:read
			}
		}
	}
}`, db))
	page := func(key string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, g.URL, nil)
		req.Header.Set("Accept", "text/html")
		if key != "" {
			req.Header.Set("X-API-Key", key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET: %d %s", res.StatusCode, b)
		}
		return string(b)
	}
	anon := page("")
	if !strings.Contains(anon, "public-time") || strings.Contains(anon, "private-report") {
		t.Errorf("anonymous page: want public-time only")
	}
	if !strings.Contains(anon, "cache 1m0s") {
		t.Errorf("anonymous page lacks the cache badge")
	}
	ops := page("catalog-test-key-0123456789")
	if !strings.Contains(ops, "public-time") || !strings.Contains(ops, "private-report") || !strings.Contains(ops, ">auth<") {
		t.Errorf("page with a key: want both tools and an auth badge")
	}
	if strings.Contains(ops, "catalog-test-key") {
		t.Error("the page shows the key")
	}
	if wrong := page("not-the-key-0123456789abc"); strings.Contains(wrong, "private-report") {
		t.Error("a wrong key sees the private tool")
	}
}
