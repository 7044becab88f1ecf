package caddymodule

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// What approval covers beyond tools calls (README, Approvals).

// A source under `approval required` serves its tools only: the upstream's
// resources, templates and prompts (and so their completions) cannot be
// approved, so they are neither listed nor read, got or completed, while
// its tools still ask. Declared prompts are served beside it.
func TestApprovalRequiredSourceServesToolsOnly(t *testing.T) {
	node, script := everything(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source every mcp stdio %s %s stdio {
			approval required
		}
		prompt hello {
			description "A declared prompt"
			message user "Hello"
		}
	}
}`, node, script))
	c := g.mcpClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	if res, err := c.ListResources(ctx, mcp.ListResourcesRequest{}); err == nil {
		for _, r := range res.Resources {
			t.Errorf("resources/list shows the source's %s", r.URI)
		}
	}
	if res, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{}); err == nil {
		for _, r := range res.ResourceTemplates {
			t.Errorf("resources/templates/list shows the source's %s", r.URITemplate.Raw())
		}
	}
	read := mcp.ReadResourceRequest{}
	read.Params.URI = "demo://resource/dynamic/text/3"
	if rr, err := c.ReadResource(ctx, read); err == nil {
		t.Errorf("resources/read of the source's resource: %+v", rr)
	}
	prompts, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range prompts.Prompts {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "hello" {
		t.Errorf("prompts/list: %v, want the declared hello only", names)
	}
	get := mcp.GetPromptRequest{}
	get.Params.Name = "every_simple-prompt"
	if pr, err := c.GetPrompt(ctx, get); err == nil {
		t.Errorf("prompts/get of the source's prompt: %+v", pr)
	}
	complete := mcp.CompleteRequest{}
	complete.Params.Ref = mcp.PromptReference{Type: "ref/prompt", Name: "every_args-prompt"}
	complete.Params.Argument.Name, complete.Params.Argument.Value = "city", "L"
	if cr, err := c.Complete(ctx, complete); err == nil && len(cr.Completion.Values) > 0 {
		t.Errorf("completion of the source's prompt: %+v", cr.Completion)
	}
	// Its tools still ask (here a client that cannot be asked).
	if _, err := callWithAnswer(t, c, "every_echo", map[string]any{"message": "x"}); err == nil || !strings.Contains(err.Error(), "needs approval through elicitation") {
		t.Errorf("every_echo under approval required: %v", err)
	}
}

// A declared resource on a connector under an approval policy loads only
// with `approval off` (else the load names the resource, see
// err-approval-resource.caddytest), and is then read without a question.
func TestApprovalOffResource(t *testing.T) {
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed.sql")
	writeFile(t, seed, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL); INSERT INTO notes (body) VALUES ('first');\n")
	cfg := func(approval string) string {
		return fmt.Sprintf(`SITE {
	mcp /mcp {
		connector notes sqlite %s {
			seed %s
			approval writes
		}
		resource notes://count {
			use notes
			statement "SELECT count(*) AS n FROM notes"
			%s
		}
	}
}`, filepath.Join(dir, "notes.db"), seed, approval)
	}
	g := startGateway(t, cfg("approval off"))
	if err := g.load(cfg("")); err == nil || !strings.Contains(err.Error(), `resource "notes://count" runs on connector "notes", which has approval writes, but a resource read cannot be approved`) {
		t.Fatalf("a resource under approval writes loaded: %v", err)
	}
	c := g.mcpClient(t)
	read := mcp.ReadResourceRequest{}
	read.Params.URI = "notes://count"
	rr, err := c.ReadResource(context.Background(), read)
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].(mcp.TextResourceContents).Text, `"n":1`) {
		t.Fatalf("read: %+v %v", rr, err)
	}
}
