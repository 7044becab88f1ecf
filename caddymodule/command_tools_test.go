package caddymodule

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/caddymodule/cli"
)

// `caddy mcp tools` on the README's example lists every tool with its
// inputs and connector, and never the database path.
func TestMCPToolsExample(t *testing.T) {
	out, errOut, err := runMCPCommand(t, "tools", "--config", "../Caddyfile.example", "--adapter", "caddyfile")
	if err != nil {
		t.Fatalf("mcp tools: %v\n%s", err, errOut)
	}
	t.Logf("output:\n%s", out)
	for _, want := range []string{
		"MCP endpoint edgemcp-demo 1.0.0", "host localhost", "path /mcp", "connector demo sqlite (read_only)", "5 tools",
		"get-customer", "Fetch one customer by id", "connector: demo (sqlite)",
		"customer_id  int       required", "The customer's id",
		"search-products", `query     string  default ""`, "enum hardware|books|furniture", "default name, enum name|price|category",
		"limit     int     default 10", "customer-orders", "since        datetime  default 2024-01-01T00:00:00Z",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, secret := range []string{"demo.db", "demo.sql", "SELECT"} {
		if strings.Contains(out, secret) {
			t.Errorf("output shows %q", secret)
		}
	}
}

// The listing works from the config alone: an unset DSN variable and an
// unreachable database are fine. Settings other parts of the module add
// (cache, auth, handler scripts) are shown, with credentials redacted, and
// --json gives the same listing as data.
func TestMCPToolsNoConnectionAndSettings(t *testing.T) {
	cfg := `{"apps":{"http":{"servers":{"srv0":{"listen":[":9443"],"routes":[{"match":[{"path":["/mcp"]}],"handle":[
	 {"handler":"mcp","name":"ops","catalog_off":true,
	  "auth":[{"name":"keys","provider":{"provider":"api_key","header":"X-API-Key","keys":[{"key":"s3cr3t-key-0123456789"}]}}],
	  "cache":{"max_size":268435456,"redis":"redis://:hunter2@10.0.0.9:6379/0"},
	  "connectors":[{"name":"main","type":"postgres","dsn":"postgres://app:pa55w0rd@127.0.0.1:1/db","statement_timeout":5000000000,"max_result_size":4194304}],
	  "tools":[{"name":"get-user","description":"Fetch a user","use":"main","statement":"SELECT 1",
	            "inputs":[{"name":"id","type":"int","required":true}],"cache":{"ttl":60000000000},"auth":{"use":"keys","scopes":["users:read"]},
	            "annotations":{"read_only":true}},
	           {"name":"greet","description":"Say hello","handler":"./tools/greet/handler.js",
	            "inputs":[{"name":"name","type":"string","default":"world"}]}]}]}]}}}}}`
	file := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runMCPCommand(t, "tools", "--config", file)
	if err != nil {
		t.Fatalf("mcp tools: %v\n%s", err, errOut)
	}
	t.Logf("output:\n%s", out)
	for _, want := range []string{
		"MCP endpoint ops (server srv0, listen :9443, path /mcp)", "catalog off",
		"connector main postgres (max_result_size 4 MiB, statement_timeout 5s)", "2 tools",
		"cache: 1m0s", "auth: keys (scope users:read)", "annotations: read_only=true",
		`handler: "./tools/greet/handler.js"`, "name  string  default world",
		`"max_size":268435456`, `"provider":"api_key"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, secret := range []string{"s3cr3t-key", "hunter2", "pa55w0rd", "127.0.0.1:1", "SELECT"} {
		if strings.Contains(out, secret) {
			t.Errorf("output shows %q", secret)
		}
	}

	js, _, err := runMCPCommand(t, "tools", "--config", file, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var listing []cli.Endpoint
	if err := json.Unmarshal([]byte(js), &listing); err != nil {
		t.Fatalf("--json output %q: %v", js, err)
	}
	if len(listing) != 1 || len(listing[0].Tools) != 2 || listing[0].Tools[0].Inputs[0].Name != "id" || listing[0].Catalog {
		t.Errorf("--json listing: %+v", listing)
	}
	if strings.Contains(js, "hunter2") || strings.Contains(js, "s3cr3t-key") {
		t.Error("--json output shows a secret")
	}
}

func TestMCPToolsErrors(t *testing.T) {
	noMCP := filepath.Join(t.TempDir(), "Caddyfile")
	if err := os.WriteFile(noMCP, []byte(":8080 {\n\trespond hi\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "Caddyfile")
	if err := os.WriteFile(bad, []byte(":8080 {\n\tmcp {\n\t\tcatalog maybe\n\t}\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no config flag", []string{"tools"}, "--config is required"},
		{"missing file", []string{"tools", "--config", filepath.Join(t.TempDir(), "nope")}, "no such file"},
		{"no mcp handler", []string{"tools", "--config", noMCP, "--adapter", "caddyfile"}, "no mcp handler"},
		{"malformed", []string{"tools", "--config", bad, "--adapter", "caddyfile"}, `catalog must be on or off, got "maybe"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, err := runMCPCommand(t, tc.args...)
			if err == nil {
				t.Fatal("want an error")
			}
			if !strings.Contains(err.Error()+errOut, tc.want) {
				t.Errorf("error %q (stderr %q) lacks %q", err, errOut, tc.want)
			}
		})
	}
}

// `caddy mcp tools` shows which values of a tool come from the caller's
// verified identity: templates of the statement, with their defaults, and
// what the connector hands the database.
func TestMCPToolsIdentity(t *testing.T) {
	out, errOut, err := runMCPCommand(t, "tools", "--config", "../examples/rls/Caddyfile", "--adapter", "caddyfile")
	if err != nil {
		t.Fatalf("mcp tools: %v\n%s", err, errOut)
	}
	t.Logf("output:\n%s", out)
	for _, want := range []string{
		"  tenant-notes\n    The notes of the caller's organization\n    connector: notes (postgres)\n    cache: 30s\n    from identity: auth.claims (claims_setting request.jwt.claims)\n",
		`    from identity: auth.claims.region (default "eu"), auth.subject, auth.claims (claims_setting request.jwt.claims)` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	js, _, err := runMCPCommand(t, "tools", "--config", "../examples/rls/Caddyfile", "--adapter", "caddyfile", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var listing []cli.Endpoint
	if err := json.Unmarshal([]byte(js), &listing); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%q", listing[0].Tools[1].FromIdentity); got != `["auth.claims.region (default \"eu\")" "auth.subject" "auth.claims (claims_setting request.jwt.claims)"]` {
		t.Errorf("--json from_identity: %s", got)
	}
}

// `caddy mcp tools` says who shares an MCP source's upstream state: a
// stdio source's one child serves every caller; an HTTP source behind
// default_auth keeps a session per caller unless it says session shared
// (docs/sources.md, MCP servers). A toolset is listed with its path, what
// it selects and its own auth and rate limit.
func TestMCPToolsSourceState(t *testing.T) {
	file := filepath.Join(t.TempDir(), "Caddyfile")
	writeFile(t, file, `localhost {
	mcp /mcp {
		auth keys api_key {
			key abcdefghijklmnopqrstuvwxyz
		}
		default_auth keys
		source files mcp stdio npx -y @modelcontextprotocol/server-filesystem /srv
		source mine mcp https://mcp.example.com/mcp
		source all mcp https://mcp.example.com/mcp {
			session shared
		}
		toolset docs {
			sources files
			tools files_read_*
			auth keys
			rate_limit 10 per 1m by ip
		}
	}
}`)
	out, errOut, err := runMCPCommand(t, "tools", "--config", file, "--adapter", "caddyfile")
	if err != nil {
		t.Fatalf("mcp tools: %v\n%s", err, errOut)
	}
	for _, want := range []string{
		"source files mcp: state shared by every caller: one child process serves them all",
		"source mine mcp: state one upstream session per caller",
		"source all mcp: state shared by every caller: one upstream session serves them all",
		"toolset docs at /mcp/docs: sources files; tools files_read_*; auth keys; rate_limit 10 per 1m0s by ip",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// `caddy mcp tools` lists a sql_tools set's tools by name, with their
// inputs, connector, auth and what they take from the caller's identity,
// from the config alone (examples/sql-agent, whose database is not there).
func TestMCPToolsSQLTools(t *testing.T) {
	out, errOut, err := runMCPCommand(t, "tools", "--config", "../examples/sql-agent/Caddyfile", "--adapter", "caddyfile")
	if err != nil {
		t.Fatalf("mcp tools: %v\n%s", err, errOut)
	}
	t.Logf("output:\n%s", out)
	for _, want := range []string{
		"5 tools", "shop_list_tables", "shop_describe_table", "shop_query", "shop_explain", "export_customers",
		"connector: shop (postgres)", "sql     string  required", "params  array   optional",
		"from identity: auth.claims (claims_setting request.jwt.claims)",
		`requires: [{"tool":"shop_describe_table","within_calls":20}]`, `after: [{"deny":["export_*"],"tool":"shop_query"}]`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}
