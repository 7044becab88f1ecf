package catalog

import (
	"bytes"
	"encoding/json"
	"net"
	"net/url"
	"strings"
)

// The catalog's "Connect" section: the configuration each common MCP client
// reads, filled in with this endpoint's URL and, when the endpoint has auth,
// the header its credentials go in. Only placeholders are written where a
// credential goes (an input prompt, an environment variable, <token>): the
// page never holds a secret.

// clientConfig is one client's snippet.
type clientConfig struct {
	ID    string // element id of the snippet, for the copy button
	Label string // the client
	File  string // where the snippet goes
	Lang  string // "json" or "shell"
	Text  string
	Note  string // what to replace, when there is anything
}

// Credential is where a caller's credentials go: a header and what comes
// before the secret in it ("Bearer ", or nothing for an API key header).
type Credential struct {
	Header string
	Scheme string
}

// clientConfigs are the snippets for VS Code, Claude Desktop, Cursor and the
// MCP Inspector's CLI.
func clientConfigs(server, endpoint string, cred *Credential) []clientConfig {
	key := serverKey(server)
	if strings.TrimSpace(server) == "" {
		server = key
	}
	envVar := strings.ToUpper(strings.ReplaceAll(key, "-", "_")) + "_TOKEN"
	placeholder := "<token>"
	if cred != nil && cred.Scheme == "Basic " {
		placeholder = "<base64 of user:password>"
	}

	// VS Code (.vscode/mcp.json): an http server; a credential comes from
	// an input VS Code prompts for once and stores as a secret.
	vsServer := httpServer{Type: "http", URL: endpoint}
	vscode := struct {
		Inputs  []map[string]any      `json:"inputs,omitempty"`
		Servers map[string]httpServer `json:"servers"`
	}{}
	if cred != nil {
		vscode.Inputs = []map[string]any{{"type": "promptString", "id": key + "-token", "description": "Credential for " + server, "password": true}}
		vsServer.Headers = map[string]string{cred.Header: cred.Scheme + "${input:" + key + "-token}"}
	}
	vscode.Servers = map[string]httpServer{key: vsServer}

	// Cursor (~/.cursor/mcp.json): a remote server by url; the credential
	// from an environment variable (Cursor expands ${env:NAME}).
	cursorServer := httpServer{URL: endpoint}
	if cred != nil {
		cursorServer.Headers = map[string]string{cred.Header: cred.Scheme + "${env:" + envVar + "}"}
	}
	cursor := map[string]any{"mcpServers": map[string]httpServer{key: cursorServer}}

	// Claude Desktop (claude_desktop_config.json) starts stdio servers only:
	// mcp-remote bridges to the HTTP endpoint. The header value is passed
	// through an environment variable, as mcp-remote documents, because
	// arguments with spaces are mangled on some platforms.
	claudeServer := stdioServer{Command: "npx", Args: []string{"-y", "mcp-remote", endpoint}}
	if plainHTTPRemote(endpoint) {
		claudeServer.Args = append(claudeServer.Args, "--allow-http") // mcp-remote refuses http:// except on localhost
	}
	if cred != nil {
		claudeServer.Args = append(claudeServer.Args, "--header", cred.Header+":${AUTH_HEADER}")
		claudeServer.Env = map[string]string{"AUTH_HEADER": cred.Scheme + placeholder}
	}
	claude := map[string]any{"mcpServers": map[string]stdioServer{key: claudeServer}}

	inspector := "npx @modelcontextprotocol/inspector --cli " + shellQuote(endpoint) + " --transport http --method tools/list"
	if cred != nil {
		inspector += ` --header "` + cred.Header + ": " + cred.Scheme + "$" + envVar + `"`
	}

	out := []clientConfig{
		{ID: "config-vscode", Label: "VS Code", File: ".vscode/mcp.json", Lang: "json", Text: jsonText(vscode)},
		{ID: "config-claude", Label: "Claude Desktop", File: "claude_desktop_config.json", Lang: "json", Text: jsonText(claude)},
		{ID: "config-cursor", Label: "Cursor", File: "~/.cursor/mcp.json", Lang: "json", Text: jsonText(cursor)},
		{ID: "config-inspector", Label: "MCP Inspector (CLI)", File: "shell", Lang: "shell", Text: inspector},
	}
	if cred != nil {
		out[0].Note = "VS Code asks for the credential once and keeps it in its secret storage."
		out[1].Note = "Replace " + placeholder + " with your credential."
		out[2].Note = "Set " + envVar + " in the environment Cursor starts from."
		out[3].Note = "Set " + envVar + " in your shell first."
	}
	return out
}

// httpServer and stdioServer are entries of the clients' server maps, with
// their fields in the order people write them.
type httpServer struct {
	Type    string            `json:"type,omitempty"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
}

type stdioServer struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

// serverKey is the server's name as a configuration key: lower case
// letters, digits, '-' and '_'; "mcp" when nothing is left.
func serverKey(name string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(name) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			b.WriteRune(c)
		case c == ' ' || c == '.':
			b.WriteByte('-')
		}
	}
	if s := strings.Trim(b.String(), "-_"); s != "" {
		return s
	}
	return "mcp"
}

// plainHTTPRemote: an http:// URL whose host is not loopback.
func plainHTTPRemote(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "http" {
		return false
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil {
		return !ip.IsLoopback()
	}
	return !strings.EqualFold(host, "localhost") && !strings.HasSuffix(strings.ToLower(host), ".localhost")
}

// shellQuote quotes s for a POSIX shell unless it is made only of
// characters no shell treats specially.
func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./:@%+=,", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// jsonText is v as indented JSON without HTML escaping (the template
// escapes the text where it is shown).
func jsonText(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // maps of strings: cannot fail
	return strings.TrimSuffix(buf.String(), "\n")
}
