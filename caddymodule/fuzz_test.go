package caddymodule

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
)

// FuzzCaddyfile adapts arbitrary text inside an mcp block: the parser
// never panics, and a refusal names the Caddyfile and a line.
func FuzzCaddyfile(f *testing.F) {
	for _, s := range []string{
		"connector db postgres {env.DB} {\n\tread_only\n\tmax_conns 4\n}",
		"tool t {\n\tdescription \"x\"\n\tuse db\n\tstatement \"SELECT {{ inputs.a }}\"\n\tinput a int required\n}",
		"rate_limit 5 per 1m by ip", "cache {\n\tmax_size 1MiB\n}", "source s openapi x {\n\tcache 1s respect\n}",
		"auth k api_key {\n\tkey abc\n}", "source s mcp stdio x {\n\tapproval writes\n\tcwd {\n\t\tapproval\n\t}\n}",
		"approval_timeout 1s\nconnector db sqlite x {\n\tapproval required\n}", "tool t {\n\tinput a array<array<int>> default [[1]]\n}", "}", "{", "\"", "<<SQL\n",
		"discovery auto 5 {\n\tpin a b\n}", "source s mcp http://x {\n\tprefix off\n\tdisable a s.b\n\tinclude a* {\n}\n}",
	} {
		f.Add(s)
	}
	adapter := caddyconfig.GetAdapter("caddyfile")
	f.Fuzz(func(t *testing.T, body string) {
		src := ":8080 {\n\tmcp {\n" + body + "\n\t}\n}\n"
		_, _, err := adapter.Adapt([]byte(src), map[string]any{"filename": "Caddyfile"})
		// The mcp directive's own refusals name the file and line (Caddy's
		// tokenizer and site checks word theirs as they do).
		if err != nil && strings.Contains(err.Error(), "parsing caddyfile tokens for 'mcp'") && !strings.Contains(err.Error(), "Caddyfile:") {
			t.Fatalf("an error without its file and line: %v", err)
		}
	})
}
