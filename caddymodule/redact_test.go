package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
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
