package caddymodule

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// redactSecrets are the values a config below holds, each set in the
// environment and written {$NAME} (expanded at adapt, as in CI).
var redactSecrets = map[string]string{
	"EDGEMCP_T_API_KEY":       "ak-query-7f3e9c1d5b2a",
	"EDGEMCP_T_BEARER":        "bearer-token-91ce07aa",
	"EDGEMCP_T_HEADER":        "shop-header-44d1c8e2",
	"EDGEMCP_T_SPEC_TOKEN":    "spec-query-5e8a2b7c",
	"EDGEMCP_T_ENDPOINT_KEY":  "gql-endpoint-0b9f3d61",
	"EDGEMCP_T_ARG_TOKEN":     "stdio-flag-c2e84a19",
	"EDGEMCP_T_ARG_POSITION":  "stdio-arg-6d0e1f57",
	"EDGEMCP_T_ENV":           "stdio-env-a7b3c9d2",
	"EDGEMCP_T_CLIENT_SECRET": "oauth-secret-3f71e0b8",
	"EDGEMCP_T_GATEWAY_KEY":   "gateway-api-key-8c2d5e1f",
	"EDGEMCP_T_REDIS_PASS":    "redis-pass-e6a0b4c7",
	"EDGEMCP_T_SESSION_KEY":   "session-key-0123456789abcdef0123456789abcdef",
}

// redactCaddyfile has a secret in every place a config can hold one.
const redactCaddyfile = `:9080 {
	mcp /mcp {
		session_key {$EDGEMCP_T_SESSION_KEY}
		cache {
			redis redis://:{$EDGEMCP_T_REDIS_PASS}@127.0.0.1:6379/0
		}
		auth keys api_key {
			key {$EDGEMCP_T_GATEWAY_KEY}
		}
		tool shout {
			description "Shouts through the shop (header {$EDGEMCP_T_HEADER})"
			handler ./shout.js
		}
		source pets openapi https://specs.example/pets.json?token={$EDGEMCP_T_SPEC_TOKEN} {
			base_url https://pets.example/v1
			credential api_key query api_key {$EDGEMCP_T_API_KEY}
			credential oauth2 {
				token_url https://idp.example/token
				client_id gateway
				client_secret {$EDGEMCP_T_CLIENT_SECRET}
			}
			credential bearer {env.PETS_TOKEN}
		}
		source shop graphql https://shop.example/graphql?key={$EDGEMCP_T_ENDPOINT_KEY} {
			header X-Shop-Key {$EDGEMCP_T_HEADER}
			credential bearer {$EDGEMCP_T_BEARER}
		}
		source files mcp stdio npx -y @example/server --token={$EDGEMCP_T_ARG_TOKEN} {$EDGEMCP_T_ARG_POSITION} {
			env API_TOKEN {$EDGEMCP_T_ENV}
		}
	}
}
`

func setRedactSecrets(t *testing.T) {
	for k, v := range redactSecrets {
		t.Setenv(k, v)
	}
}

func assertNoSecret(t *testing.T, what, out string) {
	t.Helper()
	for name, v := range redactSecrets {
		if strings.Contains(out, v) {
			t.Errorf("%s shows %s (%s)", what, v, name)
		}
	}
}

// `caddy mcp tools`, as text and as JSON, shows no configured secret:
// not a credential's value, a static header, the query of a spec or an
// endpoint URL, a child's arguments or environment, a key, a Redis
// password, nor a secret that also appears in a description. What is not
// secret stays readable.
func TestMCPToolsRedactsSecrets(t *testing.T) {
	setRedactSecrets(t)
	file := filepath.Join(t.TempDir(), "Caddyfile")
	writeFile(t, file, redactCaddyfile)
	text, errOut, err := runMCPCommand(t, "tools", "--config", file, "--adapter", "caddyfile")
	if err != nil {
		t.Fatalf("mcp tools: %v\n%s", err, errOut)
	}
	js, _, err := runMCPCommand(t, "tools", "--config", file, "--adapter", "caddyfile", "--json")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("text:\n%s", text)
	assertNoSecret(t, "the text listing", text)
	assertNoSecret(t, "the JSON listing", js)
	for _, want := range []string{"https://specs.example/pets.json?[redacted]", "https://shop.example/graphql?[redacted]",
		"redis://[redacted]@127.0.0.1:6379/0", "{env.PETS_TOKEN}", `"-y"`, `"command":"npx"`, `"X-Shop-Key":"[redacted]"`,
		`"kind":"api_key"`, `"token_url":"https://idp.example/token"`, "Shouts through the shop (header [redacted])"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text listing lacks %s", want)
		}
	}
	var listing []endpointListing
	if err := json.Unmarshal([]byte(js), &listing); err != nil || len(listing) != 1 {
		t.Fatalf("--json: %v", err)
	}
}

// A load that fails quotes no secret: the error (here a spec URL whose
// query holds a key, and which cannot be fetched) is scrubbed of every
// value the config holds, as written and as its placeholders expand.
func TestLoadErrorRedactsSecrets(t *testing.T) {
	setRedactSecrets(t)
	g := &gateway{t: t, port: freePort(t)}
	caddyMu.Lock()
	err := g.load(fmt.Sprintf(`SITE {
	mcp /mcp {
		source pets openapi http://127.0.0.1:%d/spec.json?api_key={$EDGEMCP_T_API_KEY}&other={env.EDGEMCP_T_SPEC_TOKEN}
	}
}`, freePort(t)))
	_ = caddy.Stop()
	caddyMu.Unlock()
	if err == nil || !strings.Contains(err.Error(), `source "pets"`) {
		t.Fatalf("the load: %v", err)
	}
	assertNoSecret(t, "the load error", err.Error())
}

// The catalog page shows what tools/list shows, never the config.
func TestCatalogRedactsSecrets(t *testing.T) {
	setRedactSecrets(t)
	up := newPetsUpstream(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		session_key {$EDGEMCP_T_SESSION_KEY}
		tool shout {
			description "Shouts"
			handler %s
		}
		source pets openapi ../sources/openapi/testdata/petstore.yaml {
			base_url %s/v1?key={$EDGEMCP_T_ENDPOINT_KEY}
			credential api_key query api_key {$EDGEMCP_T_API_KEY}
			header X-Shop-Key {$EDGEMCP_T_HEADER}
		}
	}
}`, writeScript(t, "export default () => 'hi'"), up.URL))
	res, page := httpDo(t, http.MethodGet, g.URL, map[string]string{"Accept": "text/html"}, "")
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "pets_showPetById") {
		t.Fatalf("catalog: %d %.200s", res.StatusCode, page)
	}
	assertNoSecret(t, "the catalog page", page)
}

func writeScript(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "handler.js")
	writeFile(t, p, src)
	return p
}

// Every line the handler logs is scrubbed: its message and its string,
// error and Stringer fields; other fields pass as they are. What the
// wrapped core refuses (a level it does not log) stays unwritten.
func TestScrubbedLogger(t *testing.T) {
	_, r := redactConfigJSON(json.RawMessage(`{"headers":{"X-Key":"hdr-secret-0042"},"url":"https://x.example/a?k=query-secret-77"}`))
	core, logs := observer.New(zapcore.InfoLevel)
	l := r.scrubber().logger(zap.New(core)).With(zap.String("with", "w hdr-secret-0042"))
	l.Debug("below the level")
	l.Info("fetch https://x.example/a?k=query-secret-77 failed",
		zap.String("s", "a hdr-secret-0042 b"), zap.Error(errors.New("e query-secret-77")),
		zap.Stringer("st", stringer("query-secret-77")), zap.Int("n", 7))
	if logs.Len() != 1 {
		t.Fatalf("%d lines", logs.Len())
	}
	e := logs.All()[0]
	line := fmt.Sprint(e.Message, e.ContextMap())
	for _, s := range []string{"hdr-secret-0042", "query-secret-77"} {
		if strings.Contains(line, s) {
			t.Errorf("the line holds %s: %s", s, line)
		}
	}
	if e.ContextMap()["n"] != int64(7) || e.ContextMap()["s"] != "a [redacted] b" {
		t.Errorf("fields: %v", e.ContextMap())
	}
}

type stringer string

func (s stringer) String() string { return string(s) }

// What the redaction keeps and what it takes, by position.
func TestRedactConfigJSON(t *testing.T) {
	raw := `{"name":"gw","session_keys":["k-0123456789"],"description":"see https://docs.example/x for help",
	 "sources":[{"source":{"spec":"https://s.example/o.json?t=abc#frag","url":"https://u:pw@h.example/mcp",
	   "uri":"docs://kind/{kind}","args":["-y","--stdio","--key=v1","pos","{env.A}"],"env":{"A":"e1"},
	   "headers":{"X":"h1"},"credentials":[{"kind":"basic","username":"u1","password":"p1"},{"kind":"bearer","token":"{env.T}"}]}}],
	 "cache":{"redis":"redis://:pw2@r.example:6379/0","key_prefix":"p:"}}`
	out, r := redactConfigJSON(json.RawMessage(raw))
	got := string(out)
	for _, want := range []string{`"name":"gw"`, `"session_keys":["[redacted]"]`, `"description":"see https://docs.example/x for help"`,
		`"spec":"https://s.example/o.json?[redacted]"`, `"url":"https://[redacted]@h.example/mcp"`, `"uri":"docs://kind/{kind}"`,
		`"args":["-y","--stdio","[redacted]","[redacted]","{env.A}"]`, `"env":{"A":"[redacted]"}`, `"headers":{"X":"[redacted]"}`,
		`{"kind":"basic","password":"[redacted]","username":"[redacted]"}`, `{"kind":"bearer","token":"{env.T}"}`,
		`"redis":"redis://[redacted]@r.example:6379/0"`} {
		if !strings.Contains(got, want) {
			t.Errorf("redacted config lacks %s:\n%s", want, got)
		}
	}
	for _, s := range []string{"k-0123456789", "abc", "frag", "--key=v1", "pw2", "e1", "h1", "p1", "pw", "u:pw"} {
		if !r.secrets[s] {
			t.Errorf("%q is not remembered as a secret", s)
		}
	}
	for _, s := range []string{"u", "t", "t=abc"} {
		if r.secrets[s] {
			t.Errorf("%q is remembered as a secret: a name, not a value", s)
		}
	}
}

// A Caddyfile error on a line that holds a secret names the line and what
// is wrong, never the value.
func TestAdaptErrorsQuoteNoSecret(t *testing.T) {
	const secret = "adapt-secret-5c1e9a07"
	for _, line := range []string{
		"source a openapi x.yaml {\n\t\t\tcredential bearer " + secret + " extra\n\t\t}",
		"source a openapi x.yaml {\n\t\t\tcredential api_key nowhere k " + secret + "\n\t\t}",
		"source a openapi x.yaml {\n\t\t\tcredential oauth2 {\n\t\t\t\tclient_secret " + secret + " extra\n\t\t\t}\n\t\t}",
		"source a graphql https://g.example/graphql {\n\t\t\theader X-Key " + secret + " extra\n\t\t}",
		"source a mcp stdio node s.js {\n\t\t\tenv API_KEY " + secret + " extra\n\t\t}",
		"source a mcp https://m.example/mcp {\n\t\t\tenv API_KEY " + secret + "\n\t\t}",
		"auth keys api_key {\n\t\t\tkey " + secret + " extra\n\t\t}",
		"session_key " + secret,
	} {
		_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(":9080 {\n\tmcp {\n\t\t"+line+"\n\t}\n}\n"), map[string]any{"filename": "Caddyfile"})
		if err == nil {
			t.Errorf("%q adapted", line)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error quotes the secret: %v", err)
		}
	}
}
