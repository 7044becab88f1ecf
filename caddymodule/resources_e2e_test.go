package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/caddymodule/cli"
)

// Declared resources and prompts through the real Caddy, against Postgres,
// with mcp-go's client and raw JSON-RPC (for exact error codes).

const (
	respromptAliceKey = "resprompt-alice-key-3b9d1f7a2c"
	respromptBobKey   = "resprompt-bob-key-8e4c2a6f0d"
)

func respromptCaddyfile(t *testing.T) string {
	t.Helper()
	db := testDB(t)
	execSQL(t, db, `DROP SCHEMA IF EXISTS edgemcp_resprompt CASCADE`)
	execSQL(t, db, `CREATE SCHEMA edgemcp_resprompt`)
	execSQL(t, db, `CREATE TABLE edgemcp_resprompt.docs (slug text PRIMARY KEY, kind text NOT NULL, body text NOT NULL)`)
	execSQL(t, db, `INSERT INTO edgemcp_resprompt.docs VALUES
		('intro', 'guide', '# Intro'), ('api', 'reference', '# API'), ('setup', 'guide', '# Setup')`)
	t.Cleanup(func() { execSQL(t, testDB(t), `DROP SCHEMA IF EXISTS edgemcp_resprompt CASCADE`) })
	t.Setenv("EDGEMCP_RESPROMPT_ALICE", respromptAliceKey)
	t.Setenv("EDGEMCP_RESPROMPT_BOB", respromptBobKey)
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		connector main postgres %s {
			read_only
		}
		auth keys api_key {
			key {env.EDGEMCP_RESPROMPT_ALICE} {
				subject alice
				scope docs:admin
			}
			key {env.EDGEMCP_RESPROMPT_BOB} {
				subject bob
			}
		}
		tool ping {
			description "Answers one"
			use main
			statement "SELECT 1 AS one"
		}
		resource docs://{slug} {
			name doc
			title "Document"
			description "One document's text, by slug"
			mime_type text/markdown
			use main
			statement "SELECT body FROM edgemcp_resprompt.docs WHERE slug = {{ inputs.slug }}"
		}
		resource docs://kind/{kind} {
			description "The slugs of one kind of document"
			use main
			statement "SELECT slug FROM edgemcp_resprompt.docs WHERE kind = {{ inputs.kind }} ORDER BY slug"
			input kind string enum guide|reference|glossary "The kind"
		}
		resource docs://index {
			description "Every document (admins)"
			use main
			statement "SELECT slug, kind FROM edgemcp_resprompt.docs ORDER BY slug"
			auth keys {
				scope docs:admin
			}
		}
		prompt review {
			title "Review a document"
			description "Asks for a review of one document"
			argument slug required "The document's slug"
			argument tone enum friendly|strict|formal "How to say it"
			message user "Review {{ arguments.slug }} in a {{arguments.tone}} tone; keep {{ \"{{\" }}braces}} as written."
			message assistant "I will review {{ arguments.slug }}."
		}
		prompt audit {
			description "Alice's audit"
			message user "Audit everything."
			auth keys {
				subject alice
			}
		}
	}
}`, postgresURL(t))
}

func TestDeclaredResourcesAndPromptsMCPGo(t *testing.T) {
	g := startGateway(t, respromptCaddyfile(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	bob := g.mcpClient(t, transport.WithHTTPHeaders(map[string]string{"X-API-Key": respromptBobKey}))
	alice := g.mcpClient(t, transport.WithHTTPHeaders(map[string]string{"X-API-Key": respromptAliceKey}))

	caps := bob.GetServerCapabilities()
	if caps.Resources == nil || caps.Prompts == nil || caps.Completions == nil {
		t.Fatalf("capabilities: %+v", caps)
	}

	// Listing follows the policies: bob sees neither the admin index nor
	// alice's prompt.
	for _, tc := range []struct {
		who string
		c   interface {
			ListResources(context.Context, mcp.ListResourcesRequest) (*mcp.ListResourcesResult, error)
		}
		resources []string
	}{{"bob", bob, nil}, {"alice", alice, []string{"docs://index"}}} {
		res, err := tc.c.ListResources(ctx, mcp.ListResourcesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range res.Resources {
			got = append(got, r.URI)
		}
		if !slices.Equal(got, tc.resources) {
			t.Errorf("%s: resources/list %v, want %v", tc.who, got, tc.resources)
		}
	}
	tmpls, err := bob.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rt := range tmpls.ResourceTemplates {
		got = append(got, rt.URITemplate.Raw()+" "+rt.MIMEType)
	}
	slices.Sort(got)
	if want := []string{"docs://kind/{kind} application/json", "docs://{slug} text/markdown"}; !slices.Equal(got, want) {
		t.Errorf("resources/templates/list: %v, want %v", got, want)
	}

	// A template read binds the URI's value as a parameter.
	read := func(c interface {
		ReadResource(context.Context, mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error)
	}, uri string) (string, string, error) {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		res, err := c.ReadResource(ctx, req)
		if err != nil {
			return "", "", err
		}
		if len(res.Contents) != 1 {
			t.Fatalf("%s: contents %+v", uri, res.Contents)
		}
		tc, ok := res.Contents[0].(mcp.TextResourceContents)
		if !ok || tc.URI != uri {
			t.Fatalf("%s: contents %#v", uri, res.Contents[0])
		}
		return tc.Text, tc.MIMEType, nil
	}
	if text, mt, err := read(bob, "docs://intro"); err != nil || text != "# Intro" || mt != "text/markdown" {
		t.Errorf("docs://intro: %q %q %v", text, mt, err)
	}
	if text, mt, err := read(bob, "docs://kind/guide"); err != nil || text != `[{"slug":"intro"},{"slug":"setup"}]` || mt != "application/json" {
		t.Errorf("docs://kind/guide: %q %q %v", text, mt, err)
	}
	if text, _, err := read(alice, "docs://index"); err != nil || !strings.Contains(text, `"slug":"api"`) {
		t.Errorf("alice docs://index: %q %v", text, err)
	}
	if _, _, err := read(bob, "docs://index"); err == nil {
		t.Error("bob read the admin index")
	}

	// Prompts: listed per caller, rendered once (a value is never a template).
	prompts, err := bob.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "review" || len(prompts.Prompts[0].Arguments) != 2 || !prompts.Prompts[0].Arguments[0].Required {
		t.Errorf("bob's prompts/list: %+v", prompts.Prompts)
	}
	if ap, err := alice.ListPrompts(ctx, mcp.ListPromptsRequest{}); err != nil || len(ap.Prompts) != 2 {
		t.Errorf("alice's prompts/list: %+v %v", ap, err)
	}
	get := mcp.GetPromptRequest{}
	get.Params.Name = "review"
	get.Params.Arguments = map[string]string{"slug": "{{ arguments.tone }}", "tone": "strict"}
	pr, err := bob.GetPrompt(ctx, get)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range pr.Messages {
		texts = append(texts, string(m.Role)+": "+m.Content.(mcp.TextContent).Text)
	}
	want := []string{
		"user: Review {{ arguments.tone }} in a strict tone; keep {{braces}} as written.",
		"assistant: I will review {{ arguments.tone }}.",
	}
	if !slices.Equal(texts, want) {
		t.Errorf("prompts/get: %q, want %q", texts, want)
	}
	get.Params.Name = "audit"
	get.Params.Arguments = nil
	if _, err := bob.GetPrompt(ctx, get); err == nil {
		t.Error("bob got alice's prompt")
	}
	if pr, err := alice.GetPrompt(ctx, get); err != nil || len(pr.Messages) != 1 {
		t.Errorf("alice's audit: %+v %v", pr, err)
	}

	// Completion offers the declared enum values.
	complete := func(ref any, arg, value string) []string {
		req := mcp.CompleteRequest{}
		req.Params.Ref = ref
		req.Params.Argument = mcp.CompleteArgument{Name: arg, Value: value}
		res, err := bob.Complete(ctx, req)
		if err != nil {
			t.Fatalf("complete %s: %v", arg, err)
		}
		return res.Completion.Values
	}
	if v := complete(mcp.PromptReference{Type: "ref/prompt", Name: "review"}, "tone", "f"); !slices.Equal(v, []string{"friendly", "formal"}) {
		t.Errorf("prompt completion: %v", v)
	}
	if v := complete(mcp.PromptReference{Type: "ref/prompt", Name: "review"}, "slug", ""); len(v) != 0 {
		t.Errorf("completion of a free argument: %v", v)
	}
	if v := complete(mcp.ResourceReference{Type: "ref/resource", URI: "docs://kind/{kind}"}, "kind", "G"); !slices.Equal(v, []string{"guide", "glossary"}) {
		t.Errorf("template completion: %v", v)
	}
}

// TestDeclaredResourcesErrorCodes reads exact JSON-RPC codes: a refused
// resource answers as an unknown one, a value that does not fit the
// variable's type fails validation, no row is "not found", and a value
// shaped like SQL is bound, not run.
func TestDeclaredResourcesErrorCodes(t *testing.T) {
	g := startGateway(t, respromptCaddyfile(t))
	s := g.rawSession(t, "2025-06-18")
	post := func(body string, key string) rpcResponse {
		t.Helper()
		resp, _ := s.postWith(t, body, map[string]string{"X-API-Key": key})
		return resp
	}
	readBody := func(uri string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":%q}}`, uri)
	}
	for _, tc := range []struct {
		name, uri, key string
		code           int
		msg            string
	}{
		{"refused is unknown", "docs://index", respromptBobKey, -32002, `resource "docs://index" not found`},
		{"matches nothing", "other://x", respromptBobKey, -32002, ""},
		{"no row", "docs://nope", respromptBobKey, -32002, `resource "docs://nope" not found`},
		{"bound, not spliced", "docs://x%27%20OR%20%271%27%3D%271", respromptBobKey, -32002, `resource "docs://x%27%20OR%20%271%27%3D%271" not found`},
		{"enum", "docs://kind/secret", respromptBobKey, -32000, "input validation: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := post(readBody(tc.uri), tc.key)
			if r.Error == nil || r.Error.Code != tc.code || !strings.Contains(r.Error.Message, tc.msg) {
				t.Fatalf("%s: %+v %s", tc.uri, r.Error, r.Result)
			}
		})
	}
	if r := post(readBody("docs://index"), respromptAliceKey); r.Error != nil {
		t.Errorf("alice's read: %+v", r.Error)
	}

	getBody := func(name, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{"name":%q,"arguments":%s}}`, name, args)
	}
	for _, tc := range []struct {
		name, body string
		code       int
		msg        string
	}{
		{"missing argument", getBody("review", `{}`), -32602, `missing required argument "slug"`},
		{"outside enum", getBody("review", `{"slug":"a","tone":"rude"}`), -32602, `argument "tone": "rude" is not one of`},
		{"unknown argument", getBody("review", `{"slug":"a","x":"1"}`), -32602, `unknown argument "x"`},
		{"refused is unknown", getBody("audit", `{}`), -32602, "not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := post(tc.body, respromptBobKey)
			if r.Error == nil || r.Error.Code != tc.code || !strings.Contains(r.Error.Message, tc.msg) {
				t.Fatalf("%+v %s", r.Error, r.Result)
			}
		})
	}
}

// TestDeclaredResourcesTypeScriptSDK: the official TypeScript SDK lists,
// reads, gets and completes.
func TestDeclaredResourcesTypeScriptSDK(t *testing.T) {
	dir := nodeDir(t)
	g := startGateway(t, respromptCaddyfile(t))
	run := sdkClientRunner(t, dir, g.URL, `[
		{"op":"list_resources"},
		{"op":"list_resource_templates"},
		{"op":"read_resource","uri":"docs://api"},
		{"op":"list_prompts"},
		{"op":"get_prompt","name":"review","arguments":{"slug":"api","tone":"formal"}},
		{"op":"complete","ref":{"type":"ref/resource","uri":"docs://kind/{kind}"},"argument":{"name":"kind","value":"r"}}
	]`)
	out, err := run(map[string]string{"X-API-Key": respromptAliceKey})
	if err != nil {
		t.Fatalf("sdk-client: %v\n%s", err, out)
	}
	var res struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
		Steps        []struct {
			Op     string          `json:"op"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Steps) != 6 {
		t.Fatalf("sdk-client output %s: %v", out, err)
	}
	for _, c := range []string{"resources", "prompts", "completions"} {
		if res.Capabilities[c] == nil {
			t.Errorf("capability %s missing: %s", c, out)
		}
	}
	for i, want := range []string{
		`"uri":"docs://index"`,
		`"uriTemplate":"docs://kind/{kind}"`,
		`"text":"# API"`,
		`"name":"audit"`,
		`"text":"Review api in a formal tone; keep {{braces}} as written."`,
		`"values":["reference"]`,
	} {
		if st := res.Steps[i]; st.Error != nil || !strings.Contains(string(st.Result), want) {
			t.Errorf("step %d (%s): %s %s, want %s", i, st.Op, st.Result, st.Error, want)
		}
	}
}

// TestDeclaredResourcesCatalogPage: the catalog lists the resources and
// prompts the caller may use, by the lists' checks, without statements.
func TestDeclaredResourcesCatalogPage(t *testing.T) {
	g := startGateway(t, respromptCaddyfile(t))
	page := func(key string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, g.URL, nil)
		req.Header.Set("Accept", "text/html")
		req.Header.Set("X-API-Key", key)
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
	bob, alice := page(respromptBobKey), page(respromptAliceKey)
	for _, want := range []string{"2 resources", "docs://{slug}", "text/markdown", "docs://kind/{kind}", "<code>glossary</code>", "1 prompt", "review", "How to say it"} {
		if !strings.Contains(bob, want) {
			t.Errorf("bob's page lacks %q", want)
		}
	}
	for _, hidden := range []string{"docs://index", "audit", "SELECT"} {
		if strings.Contains(bob, hidden) {
			t.Errorf("bob's page shows %q", hidden)
		}
	}
	for _, want := range []string{"3 resources", "docs://index", "2 prompts", "audit"} {
		if !strings.Contains(alice, want) {
			t.Errorf("alice's page lacks %q", want)
		}
	}
}

// TestMCPToolsListsResourcesAndPrompts: `caddy mcp tools` lists them too.
func TestMCPToolsListsResourcesAndPrompts(t *testing.T) {
	raw, err := os.ReadFile("testdata/adapt/resources-prompts.caddytest")
	if err != nil {
		t.Fatal(err)
	}
	input, _, _ := strings.Cut(string(raw), "\n----------\n")
	file := filepath.Join(t.TempDir(), "Caddyfile")
	writeFile(t, file, input)
	out, errOut, err := runMCPCommand(t, "tools", "--config", file, "--adapter", "caddyfile")
	if err != nil {
		t.Fatalf("mcp tools: %v\n%s", err, errOut)
	}
	for _, want := range []string{
		"3 resources", "docs://{slug} (doc, text/markdown)", "connector: db (postgres)",
		"docs://kind/{kind}/{page} (docs_kind_kind_page, application/json)", "auth: keys (subject alice)",
		"variable kind string enum guide|reference", "variable page int", "handler: limits.js",
		"1 prompt", "review (2 messages)", "argument slug required", "argument tone enum friendly|strict",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "SELECT") || strings.Contains(out, "Reviewing") {
		t.Errorf("output shows a statement or a template:\n%s", out)
	}
	js, _, err := runMCPCommand(t, "tools", "--config", file, "--adapter", "caddyfile", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var listing []cli.Endpoint
	if err := json.Unmarshal([]byte(js), &listing); err != nil || len(listing) != 1 || len(listing[0].Resources) != 3 || len(listing[0].Prompts) != 1 {
		t.Fatalf("--json listing %s: %v", js, err)
	}
}
