package mcp

import (
	"errors"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// TestTokenExchangeUpstream: with `credential token_exchange` on a
// session per_caller source, the recording upstream sees, for each of two
// callers, one token the authorization server issued to that caller (the
// same on every call), and never a caller's own token; a refused exchange
// is the server's error code, before any session is made.
func TestTokenExchangeUpstream(t *testing.T) {
	as := testservices.StartTokenServer(t)
	up := testservices.StartSessionUpstream(t)
	s := perCallerSource(up, upstream.CredentialConfig{Kind: "token_exchange", TokenURL: as.TokenURL,
		ClientID: as.ClientID, ClientSecret: as.ClientSecret, Audience: []string{as.Audience}, Scopes: []string{"issues:read"}})
	provision(t, s)
	tool := countTool(t, s)
	if len(tool.FromIdentity) == 0 {
		t.Error("a tool whose credential is the caller's must need an identity")
	}
	alice, bob := as.SubjectToken(t, "alice"), as.SubjectToken(t, "bob")
	a1 := mustCount(t, tool, "alice", alice)
	b1 := mustCount(t, tool, "bob", bob)
	a2 := mustCount(t, tool, "alice", alice)
	seen := map[string]string{}
	for _, c := range []struct {
		who   string
		count testservices.Count
	}{{"alice", a1}, {"bob", b1}, {"alice", a2}} {
		token, ok := strings.CutPrefix(c.count.Auth, "Bearer ")
		if !ok || token == alice || token == bob || strings.Contains(c.count.Auth, "list-token") {
			t.Fatalf("%s's call reached the upstream with %q", c.who, c.count.Auth)
		}
		if got := as.Subject(token); got != c.who {
			t.Errorf("%s's call carried a token issued to %q", c.who, got)
		}
		if prev, ok := seen[c.who]; ok && prev != token {
			t.Errorf("%s: a second exchanged token while the first is good", c.who)
		}
		seen[c.who] = token
	}
	if seen["alice"] == seen["bob"] || a1.Session == b1.Session || a1.Session != a2.Session {
		t.Errorf("callers share: tokens %v, sessions alice %s/%s bob %s", seen, a1.Session, a2.Session, b1.Session)
	}
	if as.Exchanges("alice") != 1 || as.Exchanges("bob") != 1 {
		t.Errorf("exchanges: alice %d, bob %d, want 1 each", as.Exchanges("alice"), as.Exchanges("bob"))
	}

	forged := as.SubjectToken(t, "mallory")
	_, err := countAs(t, tool, "mallory", forged[:len(forged)-4]+"AAAA")
	var refused *upstream.ExchangeRefused
	if !errors.As(err, &refused) || refused.Code != "invalid_request" || strings.Contains(err.Error(), forged[:len(forged)-4]) {
		t.Errorf("a token the server does not take: %v", err)
	}
	var safe pipeline.SafeError
	if !errors.As(err, &safe) || safe.SafeMessage() != "credential token_exchange: the authorization server refused the exchange: invalid_request" {
		t.Errorf("the caller reads %v", err)
	}
}

// TestTokenExchangeNeedsPerCallerSession: the caller's exchanged token
// cannot ride a session every caller shares.
func TestTokenExchangeNeedsPerCallerSession(t *testing.T) {
	var s Source
	d := caddyfile.NewTestDispenser(`mcp https://mcp.test/mcp {
		credential token_exchange {
			token_url https://idp.test/oauth/token
			client_id gateway
			audience https://mcp.test
		}
	}`)
	if err := s.UnmarshalCaddyfile(d); err == nil || !strings.Contains(err.Error(), "credential token_exchange takes the caller's secret: add `session per_caller`") {
		t.Errorf("shared session: %v", err)
	}
}
