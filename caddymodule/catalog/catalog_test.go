package catalog

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/zap"

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
	c := New(Options{Server: "render-test", Version: "9.9.9", Logger: zap.NewNop(),
		Contents: func(*http.Request) Contents { return Contents{Tools: engine.Tools()} }})
	req := httptest.NewRequest(http.MethodGet, "http://gw.example/mcp", nil)
	req.Header.Set("Accept", "text/html")
	rec := httptest.NewRecorder()
	if !c.Serve(rec, req, false) {
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
