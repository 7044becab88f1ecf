package catalog

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The client snippets: valid JSON in the shape each client reads, the
// endpoint's URL, and, with auth, the credential's header with a
// placeholder (never a value).
func TestClientConfigs(t *testing.T) {
	bearer := &Credential{Header: "Authorization", Scheme: "Bearer "}
	for _, tc := range []struct {
		name, server, endpoint string
		cred                   *Credential
		want                   map[string]any // snippet id → decoded JSON (or the shell line)
	}{
		{
			name: "open endpoint on loopback", server: "edgemcp-demo", endpoint: "http://127.0.0.1:8080/mcp",
			want: map[string]any{
				"config-vscode":    map[string]any{"servers": map[string]any{"edgemcp-demo": map[string]any{"type": "http", "url": "http://127.0.0.1:8080/mcp"}}},
				"config-cursor":    map[string]any{"mcpServers": map[string]any{"edgemcp-demo": map[string]any{"url": "http://127.0.0.1:8080/mcp"}}},
				"config-claude":    map[string]any{"mcpServers": map[string]any{"edgemcp-demo": map[string]any{"command": "npx", "args": []any{"-y", "mcp-remote", "http://127.0.0.1:8080/mcp"}}}},
				"config-inspector": "npx @modelcontextprotocol/inspector --cli http://127.0.0.1:8080/mcp --transport http --method tools/list",
			},
		},
		{
			name: "bearer over https", server: "Acme Tools", endpoint: "https://mcp.example.com/mcp", cred: bearer,
			want: map[string]any{
				"config-vscode": map[string]any{
					"inputs":  []any{map[string]any{"type": "promptString", "id": "acme-tools-token", "description": "Credential for Acme Tools", "password": true}},
					"servers": map[string]any{"acme-tools": map[string]any{"type": "http", "url": "https://mcp.example.com/mcp", "headers": map[string]any{"Authorization": "Bearer ${input:acme-tools-token}"}}},
				},
				"config-cursor": map[string]any{"mcpServers": map[string]any{"acme-tools": map[string]any{
					"url": "https://mcp.example.com/mcp", "headers": map[string]any{"Authorization": "Bearer ${env:ACME_TOOLS_TOKEN}"}}}},
				"config-claude": map[string]any{"mcpServers": map[string]any{"acme-tools": map[string]any{
					"command": "npx", "args": []any{"-y", "mcp-remote", "https://mcp.example.com/mcp", "--header", "Authorization:${AUTH_HEADER}"},
					"env": map[string]any{"AUTH_HEADER": "Bearer <token>"}}}},
				"config-inspector": `npx @modelcontextprotocol/inspector --cli https://mcp.example.com/mcp --transport http --method tools/list --header "Authorization: Bearer $ACME_TOOLS_TOKEN"`,
			},
		},
		{
			name: "API key header, plain http on a LAN name", server: "", endpoint: "http://gw.lan:8080/a b", cred: &Credential{Header: "X-Api-Key"},
			want: map[string]any{
				"config-vscode": map[string]any{
					"inputs":  []any{map[string]any{"type": "promptString", "id": "mcp-token", "description": "Credential for mcp", "password": true}},
					"servers": map[string]any{"mcp": map[string]any{"type": "http", "url": "http://gw.lan:8080/a b", "headers": map[string]any{"X-Api-Key": "${input:mcp-token}"}}},
				},
				"config-cursor": map[string]any{"mcpServers": map[string]any{"mcp": map[string]any{
					"url": "http://gw.lan:8080/a b", "headers": map[string]any{"X-Api-Key": "${env:MCP_TOKEN}"}}}},
				"config-claude": map[string]any{"mcpServers": map[string]any{"mcp": map[string]any{
					"command": "npx", "args": []any{"-y", "mcp-remote", "http://gw.lan:8080/a b", "--allow-http", "--header", "X-Api-Key:${AUTH_HEADER}"},
					"env": map[string]any{"AUTH_HEADER": "<token>"}}}},
				"config-inspector": `npx @modelcontextprotocol/inspector --cli 'http://gw.lan:8080/a b' --transport http --method tools/list --header "X-Api-Key: $MCP_TOKEN"`,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := clientConfigs(tc.server, tc.endpoint, tc.cred)
			if len(got) != len(tc.want) {
				t.Fatalf("%d snippets, want %d", len(got), len(tc.want))
			}
			for _, c := range got {
				want, ok := tc.want[c.ID]
				if !ok {
					t.Errorf("unexpected snippet %s", c.ID)
					continue
				}
				if c.Lang == "shell" {
					if c.Text != want {
						t.Errorf("%s:\n got %s\nwant %s", c.ID, c.Text, want)
					}
					continue
				}
				var decoded any
				if err := json.Unmarshal([]byte(c.Text), &decoded); err != nil {
					t.Errorf("%s is not JSON: %v\n%s", c.ID, err, c.Text)
					continue
				}
				if !reflect.DeepEqual(decoded, want) {
					t.Errorf("%s:\n got %s\nwant %s", c.ID, c.Text, jsonText(want))
				}
				if (tc.cred != nil) != (c.Note != "") {
					t.Errorf("%s: note %q with credential %v", c.ID, c.Note, tc.cred)
				}
			}
		})
	}
}

func TestServerKeyAndQuoting(t *testing.T) {
	for in, want := range map[string]string{
		"edgemcp-demo": "edgemcp-demo", "Acme Tools": "acme-tools", "a.b_c": "a-b_c", "ünï": "n", "---": "mcp", `"<x>"`: "x",
	} {
		if got := serverKey(in); got != want {
			t.Errorf("serverKey(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"https://h.example/mcp": "https://h.example/mcp", "http://h/a b": "'http://h/a b'", "http://h/it's": `'http://h/it'\''s'`,
		"http://h/$(x)": "'http://h/$(x)'", "": "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]bool{
		"http://127.0.0.1:8080/mcp": false, "http://localhost/mcp": false, "http://app.localhost/mcp": false,
		"http://[::1]:9/mcp": false, "https://gw.example/mcp": false, "http://gw.example/mcp": true, "http://10.0.0.2/mcp": true,
	} {
		if got := plainHTTPRemote(in); got != want {
			t.Errorf("plainHTTPRemote(%q) = %v", in, got)
		}
	}
	if strings.Contains(jsonText(map[string]string{"a": "<b>&"}), `\u003c`) {
		t.Error("jsonText escapes HTML (the template does that where it is shown)")
	}
}
