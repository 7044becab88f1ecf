package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"
)

// An upstream MCP server's resources, templates and prompts through the
// gateway: the MCP project's server-everything as a stdio child, read with
// mcp-go's client and the TypeScript SDK.

func everythingCatalogCaddyfile(t *testing.T, extra string) string {
	node, script := everything(t)
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		connector lite sqlite %s
		source every mcp stdio %s %s stdio {
			required
		}
		prompt hello {
			description "A declared prompt beside the upstream's"
			message user "Hello"
		}
		%s
	}
}`, filepath.Join(t.TempDir(), "lite.db"), node, script, extra)
}

func TestMCPSourceResourcesAndPrompts(t *testing.T) {
	g := startGateway(t, everythingCatalogCaddyfile(t, ""))
	c := g.mcpClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	res, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var static string
	for _, r := range res.Resources {
		if strings.HasPrefix(r.URI, "demo://resource/static/document/") {
			static = r.URI
		}
	}
	if static == "" {
		t.Fatalf("resources/list has none of the upstream's documents: %+v", res.Resources)
	}
	tmpls, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var raws []string
	for _, rt := range tmpls.ResourceTemplates {
		raws = append(raws, rt.URITemplate.Raw())
	}
	if !strings.Contains(strings.Join(raws, " "), "demo://resource/dynamic/text/{resourceId}") {
		t.Errorf("resources/templates/list: %v", raws)
	}

	read := func(uri string) (*mcp.ReadResourceResult, error) {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		return c.ReadResource(ctx, req)
	}
	if rr, err := read(static); err != nil || len(rr.Contents) != 1 {
		t.Errorf("read %s: %+v %v", static, rr, err)
	}
	rr, err := read("demo://resource/dynamic/text/3")
	if err != nil || len(rr.Contents) != 1 {
		t.Fatalf("read a template's resource: %+v %v", rr, err)
	}
	if tc, ok := rr.Contents[0].(mcp.TextResourceContents); !ok || tc.URI != "demo://resource/dynamic/text/3" || !strings.Contains(tc.Text, "3") {
		t.Errorf("template read contents: %#v", rr.Contents[0])
	}
	if rr, err := read("demo://resource/dynamic/blob/2"); err != nil || len(rr.Contents) != 1 {
		t.Errorf("blob read: %+v %v", rr, err)
	} else if _, ok := rr.Contents[0].(mcp.BlobResourceContents); !ok {
		t.Errorf("blob read contents: %#v", rr.Contents[0])
	}

	prompts, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]mcp.Prompt{}
	for _, p := range prompts.Prompts {
		names[p.Name] = p
	}
	for _, want := range []string{"hello", "every_simple-prompt", "every_args-prompt"} {
		if _, ok := names[want]; !ok {
			t.Errorf("prompts/list lacks %s: %v", want, names)
		}
	}
	if a := names["every_args-prompt"].Arguments; len(a) != 2 || a[0].Name != "city" || !a[0].Required {
		t.Errorf("args-prompt arguments: %+v", a)
	}
	get := mcp.GetPromptRequest{}
	get.Params.Name = "every_args-prompt"
	get.Params.Arguments = map[string]string{"city": "Lyon", "state": "Rhône"}
	pr, err := c.GetPrompt(ctx, get)
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Messages) == 0 || !strings.Contains(pr.Messages[0].Content.(mcp.TextContent).Text, "Lyon, Rhône") {
		t.Errorf("forwarded prompts/get: %+v", pr.Messages)
	}
}

// TestMCPSourceResourcesSDKAndErrors: the TypeScript SDK reads and gets
// through the gateway, and an upstream's refusal keeps its JSON-RPC code.
func TestMCPSourceResourcesSDKAndErrors(t *testing.T) {
	dir := nodeDir(t)
	g := startGateway(t, everythingCatalogCaddyfile(t, ""))
	run := sdkClientRunner(t, dir, g.URL, `[
		{"op":"read_resource","uri":"demo://resource/dynamic/text/7"},
		{"op":"get_prompt","name":"every_simple-prompt"},
		{"op":"get_prompt","name":"every_args-prompt","arguments":{}}
	]`)
	out, err := run(nil)
	if err != nil {
		t.Fatalf("sdk-client: %v\n%s", err, out)
	}
	var res struct {
		Steps []struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Steps) != 3 {
		t.Fatalf("sdk-client output %s: %v", out, err)
	}
	if s := res.Steps[0]; s.Error != nil || !strings.Contains(string(s.Result), `"uri":"demo://resource/dynamic/text/7"`) {
		t.Errorf("read: %s %+v", s.Result, s.Error)
	}
	if s := res.Steps[1]; s.Error != nil || !strings.Contains(string(s.Result), "This is a simple prompt without arguments.") {
		t.Errorf("simple prompt: %s %+v", s.Result, s.Error)
	}
	// The upstream refuses a missing required argument with -32602.
	if s := res.Steps[2]; s.Error == nil || s.Error.Code != -32602 {
		t.Errorf("args-prompt without city: %s %+v", s.Result, s.Error)
	}
}

// TestMCPSourceResourceCollision: a source's URI that a declared resource
// has fails the load, naming both; two sources of one server list each URI
// once (the first source's).
func TestMCPSourceResourceCollision(t *testing.T) {
	g := &gateway{t: t, port: freePort(t)}
	caddyMu.Lock()
	err := g.load(everythingCatalogCaddyfile(t, `resource demo://resource/dynamic/text/{resourceId} {
			description "Clashes with the upstream's template"
			use lite
			statement "SELECT {{ inputs.resourceId }} AS id"
		}`))
	_ = caddy.Stop()
	caddyMu.Unlock()
	want := `source "every": resource "demo://resource/dynamic/text/{resourceId}" is also a declared resource`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("load: %v, want %q", err, want)
	}
}

func TestMCPSourceResourceTwoSources(t *testing.T) {
	node, script := everything(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source one mcp stdio %s %s stdio {
			required
		}
		source two mcp stdio %s %s stdio {
			required
		}
	}
}`, node, script, node, script))
	c := g.mcpClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tmpls, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rt := range tmpls.ResourceTemplates {
		if rt.URITemplate.Raw() == "demo://resource/dynamic/text/{resourceId}" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the template is listed %d times: %+v", n, tmpls.ResourceTemplates)
	}
	prompts, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range prompts.Prompts {
		names = append(names, p.Name)
	}
	joined := strings.Join(names, " ")
	if !strings.Contains(joined, "one_simple-prompt") || !strings.Contains(joined, "two_simple-prompt") {
		t.Errorf("prompts of both sources, each in its namespace: %v", names)
	}
}

// TestMCPSourceCompletion: completion/complete for a source's prompt (with
// the context of the arguments already chosen) and template goes to its
// server under the original reference; a declared prompt's stays local.
func TestMCPSourceCompletion(t *testing.T) {
	g := startGateway(t, everythingCatalogCaddyfile(t, ""))
	c := g.mcpClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	complete := func(ref any, arg, value string, chosen map[string]string) []string {
		t.Helper()
		req := mcp.CompleteRequest{}
		req.Params.Ref = ref
		req.Params.Argument = mcp.CompleteArgument{Name: arg, Value: value}
		req.Params.Context = mcp.CompleteContext{Arguments: chosen}
		res, err := c.Complete(ctx, req)
		if err != nil {
			t.Fatalf("complete %s: %v", arg, err)
		}
		return res.Completion.Values
	}
	prompt := mcp.PromptReference{Type: "ref/prompt", Name: "every_completable-prompt"}
	if v := complete(prompt, "department", "S", nil); strings.Join(v, ",") != "Sales,Support" {
		t.Errorf("department completion: %v", v)
	}
	if v := complete(prompt, "name", "", map[string]string{"department": "Marketing"}); strings.Join(v, ",") != "Grace,Henry,Iris" {
		t.Errorf("name completion with context: %v", v)
	}
	tmpl := mcp.ResourceReference{Type: "ref/resource", URI: "demo://resource/dynamic/text/{resourceId}"}
	if v := complete(tmpl, "resourceId", "42", nil); strings.Join(v, ",") != "42" {
		t.Errorf("template completion: %v", v)
	}
	if v := complete(tmpl, "resourceId", "x", nil); len(v) != 0 {
		t.Errorf("template completion of a non-id: %v", v)
	}
}
