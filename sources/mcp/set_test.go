package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/pipeline"
)

// startSchemaUpstream is an mcp-go server over streamable HTTP whose tools
// answer with the arguments they received, under the input schemas given
// by name.
func startSchemaUpstream(t *testing.T, schemas map[string]string) string {
	t.Helper()
	m := server.NewMCPServer("schemas", "1", server.WithToolCapabilities(true))
	for name, schema := range schemas {
		m.AddTool(mcp.NewToolWithRawSchema(name, "echoes its arguments", json.RawMessage(schema)),
			func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				out, err := json.Marshal(req.GetArguments())
				if err != nil {
					return nil, err
				}
				return mcp.NewToolResultText(string(out)), nil
			})
	}
	srv := httptest.NewServer(server.NewStreamableHTTPServer(m))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestSetOnEveryTool: `set tenant {{ auth.claims.tenant }}` holds on every
// tool of an MCP source, whatever its schema: a free-form schema
// ({"type":"object"}, a $ref, an allOf) no longer forwards the caller's
// own tenant (it did: only a schema listing tenant as a top-level property
// was fixed). The caller's tenant is refused (-32000, nothing sent) and
// the caller's verified tenant is what the server receives; a tool whose
// schema is closed without tenant is not sent one.
func TestSetOnEveryTool(t *testing.T) {
	url := startSchemaUpstream(t, map[string]string{
		"listed": `{"type":"object","properties":{"tenant":{"type":"string"},"q":{"type":"string"}},"required":["tenant"]}`,
		"free":   `{"type":"object"}`,
		"ref":    `{"$ref":"#/$defs/args","$defs":{"args":{"type":"object","properties":{"tenant":{"type":"string"}}}}}`,
		"allof":  `{"allOf":[{"type":"object","properties":{"tenant":{"type":"string"}}}]}`,
		"closed": `{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false}`,
	})
	s := &Source{URL: url, Transport: TransportStreamable, Set: map[string]string{"tenant": "{{ auth.claims.tenant }}"}}
	provision(t, s)
	tools, err := s.Tools("up")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*pipeline.Tool{}
	for _, tl := range tools {
		byName[tl.Original] = tl
	}
	alice := &pipeline.Identity{Subject: "alice", Claims: map[string]any{"tenant": "acme"}}
	run := func(tool string, args map[string]any) (map[string]any, error) {
		t.Helper()
		tl := byName[tool]
		if tl == nil {
			t.Fatalf("no tool %s", tool)
		}
		res, err := tl.Executor.Execute(context.Background(), &pipeline.Call{Tool: tl, Inputs: args, Identity: alice})
		if err != nil {
			return nil, err
		}
		var out struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		var got map[string]any
		if json.Unmarshal(res.Native, &out) != nil || len(out.Content) != 1 || json.Unmarshal([]byte(out.Content[0].Text), &got) != nil {
			t.Fatalf("%s: not an echo: %s", tool, res.Native)
		}
		return got, nil
	}
	for _, tool := range []string{"listed", "free", "ref", "allof"} {
		_, err := run(tool, map[string]any{"tenant": "globex", "q": "x"})
		var pe *pipeline.Error
		if !errors.As(err, &pe) || pe.Code != pipeline.CodeStageFailed || pe.Stage != pipeline.StageValidation || !strings.Contains(pe.Message, `"tenant"`) {
			t.Errorf("%s: the caller's tenant was not refused: %v", tool, err)
		}
		got, err := run(tool, map[string]any{"q": "x"})
		if err != nil || got["tenant"] != "acme" || got["q"] != "x" {
			t.Errorf("%s: the server received %v (%v), want tenant acme", tool, got, err)
		}
		if len(byName[tool].FromIdentity) == 0 {
			t.Errorf("%s: does not say it takes the caller's identity", tool)
		}
	}
	if strings.Contains(string(byName["listed"].InputSchema), "tenant") {
		t.Errorf("listed still publishes tenant: %s", byName["listed"].InputSchema)
	}
	if _, err := run("closed", map[string]any{"tenant": "globex"}); err == nil {
		t.Error("closed: the caller's tenant was not refused")
	}
	if got, err := run("closed", map[string]any{"q": "x"}); err != nil || len(got) != 1 || got["q"] != "x" {
		t.Errorf("closed: the server received %v (%v), want q only", got, err)
	}
}
