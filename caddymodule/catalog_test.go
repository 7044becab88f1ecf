package caddymodule

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/caddymodule/auth"
	"github.com/edgemcp/edgemcp/caddymodule/catalog"
	"github.com/edgemcp/edgemcp/pipeline"
)

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
		want      *catalog.Credential
	}{
		{name: "no auth"},
		{name: "api key header", declared: []string{"k"}, providers: map[string]pipeline.AuthProvider{"k": keys}, want: &catalog.Credential{Header: "X-Api-Key"}},
		{name: "api key as bearer", declared: []string{"k"}, providers: map[string]pipeline.AuthProvider{"k": bearerKeys}, want: &catalog.Credential{Header: "Authorization", Scheme: "Bearer "}},
		{name: "jwt", declared: []string{"j"}, providers: map[string]pipeline.AuthProvider{"j": &auth.JWT{}}, want: &catalog.Credential{Header: "Authorization", Scheme: "Bearer "}},
		{name: "basic", declared: []string{"b"}, providers: map[string]pipeline.AuthProvider{"b": &auth.Basic{}}, want: &catalog.Credential{Header: "Authorization", Scheme: "Basic "}},
		{name: "default_auth wins over the first", declared: []string{"k", "j"}, def: "j",
			providers: map[string]pipeline.AuthProvider{"k": keys, "j": &auth.JWT{}}, want: &catalog.Credential{Header: "Authorization", Scheme: "Bearer "}},
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
		res, err := http.Get(g.URL + "?" + catalog.ScriptQuery)
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
