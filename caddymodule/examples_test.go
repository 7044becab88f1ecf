package caddymodule

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// exampleCaddyfile reads a Caddyfile of the repository and makes it
// loadable by startGateway: its global options go (the harness sets its
// own) and its site address becomes SITE.
func exampleCaddyfile(t *testing.T, path, site string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	src := regexp.MustCompile(`(?ms)^\{\n.*?^\}\n`).ReplaceAllString(string(raw), "")
	if !strings.Contains(src, site+" {") {
		t.Fatalf("%s: no site %q", path, site)
	}
	return strings.Replace(src, site+" {", "SITE {", 1)
}

// The examples run as written, from the repository root (their paths are
// relative to it), and their script tools answer as documented.
func TestExamplesScripts(t *testing.T) {
	t.Chdir("..")
	t.Run("Caddyfile.example", func(t *testing.T) {
		g := startGateway(t, exampleCaddyfile(t, "Caddyfile.example", "http://localhost:8080"))
		s := g.rawSession(t, "2025-06-18")
		card := s.call(t, "customer-card", map[string]any{"customer_id": 1}).tool(t)
		if got := card.Content[0].Text; got != `{"name":"Ada Lovelace","contact":"Ada Lovelace \u003cada@example.com\u003e","country":"🇬🇧 GB","customer_since":"2024-01-15"}` {
			t.Errorf("customer-card: %s", got)
		}
		if r := s.call(t, "customer-card", map[string]any{"customer_id": 99}); r.Error == nil || r.Error.Message != "output transform: no customer with that id" {
			t.Errorf("customer-card 99: %+v", r.Error)
		}
		quote := s.call(t, "shipping-quote", map[string]any{"weight_kg": 2, "country": "GB", "express": true}).tool(t)
		if got := quote.Content[0].Text; got != `{"country":"GB","days":1,"price_eur":16.2}` {
			t.Errorf("shipping-quote: %s", got)
		}
	})
	t.Run("examples/scripts", func(t *testing.T) {
		g := startGateway(t, exampleCaddyfile(t, "examples/scripts/Caddyfile", "http://localhost:8081"))
		s := g.rawSession(t, "2025-06-18")
		for _, who := range []any{1, "#1", " ADA@example.com "} {
			res := s.call(t, "order-summary", map[string]any{"customer": who}).tool(t)
			var sum map[string]any
			if err := json.Unmarshal([]byte(res.Content[0].Text), &sum); err != nil || sum["customer"] != "Ada Lovelace" || sum["total"] == nil {
				t.Errorf("order-summary %v: %s", who, res.Content[0].Text)
			}
		}
		if r := s.call(t, "order-summary", map[string]any{"customer": "nobody"}); r.Error == nil ||
			r.Error.Message != `input transform: customer must be an id or an e-mail address, got "nobody"` {
			t.Errorf("order-summary nobody: %+v", r.Error)
		}
		r := s.call(t, "badge", map[string]any{"label": "build", "value": "passing"})
		var res struct {
			Content []map[string]any `json:"content"`
		}
		if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Content) != 2 || res.Content[0]["type"] != "image" ||
			res.Content[0]["mimeType"] != "image/svg+xml" || res.Content[1]["text"] != "build: passing" {
			t.Fatalf("badge: %s %+v", r.Result, r.Error)
		}
		svg, err := base64.StdEncoding.DecodeString(res.Content[0]["data"].(string))
		if err != nil || !strings.HasPrefix(string(svg), "<svg") || !strings.Contains(string(svg), ">passing</text>") {
			t.Errorf("badge image: %q %v", svg, err)
		}
	})
}

// The official TypeScript SDK client calls the script tools of the worked
// example: the image block of a handler arrives intact, a mapper's throw
// arrives as -32000 with the stage and the thrown message.
func TestScriptsTypeScriptSDK(t *testing.T) {
	dir := nodeDir(t)
	node := node22(t, dir)
	t.Chdir("..")
	g := startGateway(t, exampleCaddyfile(t, "examples/scripts/Caddyfile", "http://localhost:8081"))
	steps := filepath.Join(t.TempDir(), "steps.json")
	writeFile(t, steps, `[
		{"op":"call","name":"badge","arguments":{"label":"build","value":"passing"}},
		{"op":"call","name":"order-summary","arguments":{"customer":"nobody"}},
		{"op":"call","name":"order-summary","arguments":{"customer":"#2"}}
	]`)
	out, err := exec.Command(node, filepath.Join(dir, "sdk-client.mjs"), g.URL, steps).Output()
	if err != nil {
		t.Fatalf("sdk-client: %v\n%s", err, out)
	}
	var run struct {
		Steps []struct {
			Result *struct {
				Content []map[string]any `json:"content"`
			} `json:"result"`
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(out, &run); err != nil || len(run.Steps) != 3 {
		t.Fatalf("sdk-client output %s: %v", out, err)
	}
	if r := run.Steps[0].Result; r == nil || len(r.Content) != 2 || r.Content[0]["type"] != "image" || r.Content[0]["mimeType"] != "image/svg+xml" {
		t.Errorf("badge through the SDK: %s", out)
	}
	if e := run.Steps[1].Error; e == nil || e.Code != -32000 || e.Message != `input transform: customer must be an id or an e-mail address, got "nobody"` {
		t.Errorf("mapper error through the SDK: %+v", e)
	}
	if r := run.Steps[2].Result; r == nil || !strings.Contains(r.Content[0]["text"].(string), `"customer":"Grace Hopper"`) {
		t.Errorf("order-summary through the SDK: %s", out)
	}
}

// The OpenAPI example runs as its README says: its own upstream program
// (built and started here, on a free port instead of 9082) behind the
// example's Caddyfile; the tools call it with the operator's token.
func TestExamplesOpenAPI(t *testing.T) {
	t.Chdir("..")
	const token = "example-test-token"
	t.Setenv("BOOKSHELF_TOKEN", token)
	g := startExampleWithUpstream(t, "openapi", "http://localhost:8082", "http://127.0.0.1:9082/api", "bookshelf: serving ")
	s := g.rawSession(t, "2025-06-18")

	list, _ := s.post(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	var tools struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(list.Result, &tools)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, " "); got != "books_addBook books_getBook books_listBooks" {
		t.Errorf("tools/list: %s (deleteBook is tagged admin, which the example excludes)", got)
	}

	found := s.call(t, "books_listBooks", map[string]any{"tag": []string{"mathematics", "computing"}}).tool(t)
	if got := string(found.StructuredContent["books"]); !strings.Contains(got, `"title":"Gödel, Escher, Bach"`) || strings.Contains(got, "Knuth") {
		t.Errorf("listBooks with two tags: %s", got)
	}
	added := s.call(t, "books.addBook", map[string]any{"body": map[string]any{"title": "Flatland", "author": "Edwin A. Abbott", "year": 1884}}).tool(t)
	if string(added.StructuredContent["id"]) != "4" || string(added.StructuredContent["title"]) != `"Flatland"` {
		t.Errorf("addBook: %+v", added.StructuredContent)
	}
	if got := s.call(t, "getBook", map[string]any{"bookId": 4}).tool(t); string(got.StructuredContent["author"]) != `"Edwin A. Abbott"` {
		t.Errorf("getBook 4: %+v", got.StructuredContent)
	}
	if r := s.call(t, "books_getBook", map[string]any{"bookId": 99}); r.Error == nil || r.Error.Code != -32000 ||
		!strings.Contains(r.Error.Message, `HTTP 404 Not Found: {"message":"no book 99"}`) {
		t.Errorf("getBook 99: %+v", r.Error)
	}
	if r := s.call(t, "books_getBook", map[string]any{"bookId": 0}); r.Error == nil || !strings.Contains(r.Error.Message, `input "bookId"`) {
		t.Errorf("getBook 0 (below the document's minimum): %+v", r.Error)
	}
}

// TestExampleRLS runs examples/rls as its README says: the schema and its
// policy, the Caddyfile as written, two identities through the same tools.
func TestExampleRLS(t *testing.T) {
	t.Chdir("..")
	conn := testservices.PostgresConn(t)
	schema, err := os.ReadFile("examples/rls/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	testservices.PostgresExec(t, conn, "DROP SCHEMA IF EXISTS rls_demo CASCADE")
	testservices.PostgresExec(t, conn, string(schema))
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS rls_demo CASCADE") })
	secret := "rls-example-test-secret-0123456789abcdef"
	t.Setenv("RLS_JWT_SECRET", secret)
	t.Setenv("RLS_DATABASE_URL", testservices.PostgresURLWith(t, "user", "rls_demo_gateway"))
	g := startGateway(t, exampleCaddyfile(t, "examples/rls/Caddyfile", "http://localhost:8082"))

	mint := func(claims map[string]any) string {
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte(secret)}, (&jose.SignerOptions{}).WithType("JWT"))
		if err != nil {
			t.Fatal(err)
		}
		claims["aud"] = "rls-example"
		claims["exp"] = time.Now().Add(time.Hour).Unix()
		tok, err := jwt.Signed(signer).Claims(claims).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	alice := mint(map[string]any{"sub": "alice", "tenant": "acme", "region": "us"})
	bob := mint(map[string]any{"sub": "bob", "tenant": "globex"})
	dave := mint(map[string]any{"sub": "dave"}) // no tenant claim

	// A session belongs to the caller that opened it: one per token.
	sessions := map[string]*rawSession{}
	sessionOf := func(token string) *rawSession {
		if s := sessions[token]; s != nil {
			return s
		}
		hdr := map[string]string{"Authorization": "Bearer " + token}
		resp, h := (&rawSession{url: g.URL}).postWith(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, hdr)
		if resp.Error != nil {
			t.Fatalf("initialize: %+v", resp.Error)
		}
		sessions[token] = &rawSession{url: g.URL, session: h.Get("Mcp-Session-Id"), version: "2025-11-25"}
		return sessions[token]
	}
	for _, tc := range []struct {
		token, tool, want string
	}{
		{alice, "tenant-notes", `[{"id":1,"author":"alice","body":"Acme: renew the TLS certificates"},{"id":2,"author":"carol","body":"Acme: quarterly report due Friday"}]`},
		{bob, "tenant-notes", `[{"id":3,"author":"bob","body":"Globex: migrate the billing database"}]`},
		{alice, "tenant-notes", `[{"id":1,"author":"alice","body":"Acme: renew the TLS certificates"},{"id":2,"author":"carol","body":"Acme: quarterly report due Friday"}]`},
		{alice, "my-notes", `[{"id":1,"body":"Acme: renew the TLS certificates","region":"us"}]`},
		{bob, "my-notes", `[{"id":3,"body":"Globex: migrate the billing database","region":"eu"}]`},
	} {
		if got := callAs(t, sessionOf(tc.token), tc.token, tc.tool, nil).tool(t).Content[0].Text; got != tc.want {
			t.Errorf("%s: %s\nwant %s", tc.tool, got, tc.want)
		}
	}
	r := callAs(t, sessionOf(alice), alice, "tenant-notes", map[string]any{"tenant": "globex"})
	if r.Error == nil || !strings.Contains(r.Error.Message, `input "tenant": unknown input`) {
		t.Errorf("tenant as an argument: %+v", r.Error)
	}
	if got := callAs(t, sessionOf(dave), dave, "tenant-notes", nil).tool(t).Content[0].Text; got != "[]" {
		t.Errorf("no tenant claim: %s", got)
	}
	if res, _ := httpDo(t, "POST", g.URL, nil, initializeBody); res.StatusCode != 401 {
		t.Errorf("without a token: HTTP %d", res.StatusCode)
	}
}

// The GraphQL example runs as its README says: its own upstream program
// (built and started here, on a free port instead of 9083) behind the
// example's Caddyfile; the tools call it with the operator's token.
func TestExamplesGraphQL(t *testing.T) {
	t.Chdir("..")
	t.Setenv("NOTES_TOKEN", "example-test-token")
	g := startExampleWithUpstream(t, "graphql", "http://localhost:8083", "http://127.0.0.1:9083/graphql", "notes: serving ")
	s := g.rawSession(t, "2025-06-18")
	if got := s.call(t, "notes_notes", map[string]any{"tag": "home"}).tool(t).Content[0].Text; !strings.Contains(got, "Buy milk") || strings.Contains(got, "release") {
		t.Errorf("notes tagged home: %s", got)
	}
	if got := s.call(t, "notes_note", map[string]any{"id": "2", "select": "{ text }"}).tool(t).Content[0].Text; !strings.Contains(got, "Ship the release") || strings.Contains(got, "tags") {
		t.Errorf("note 2, text only: %s", got)
	}
	if got := s.call(t, "notes.addNote", map[string]any{"text": "Water the plants", "tags": []string{"home"}}).tool(t).Content[0].Text; !strings.Contains(got, `"id":"4"`) {
		t.Errorf("addNote: %s", got)
	}
	if r := s.call(t, "notes_query", map[string]any{"query": "{ nosuch }"}); r.Error == nil || !strings.Contains(r.Error.Message, "nosuch") {
		t.Errorf("a refused document: %+v", r.Error)
	}
}

// startExampleWithUpstream runs examples/<name> as its README says, on
// test ports: it builds and starts the example's upstream program on a
// free port (it inherits the test's environment: the example's token),
// reads the URL it announces after banner, and serves the example's
// Caddyfile with that URL in place of the README's fixed one.
func startExampleWithUpstream(t *testing.T, name, site, fixedURL, banner string) *gateway {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name+"-upstream")
	if out, err := exec.Command("go", "build", "-o", bin, "./examples/"+name+"/upstream").CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/%s/upstream: %v\n%s", name, err, out)
	}
	up := exec.Command(bin, "-listen", "127.0.0.1:0")
	stdout, err := up.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Process.Kill(); _ = up.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), banner)
	if err != nil || !ok {
		t.Fatalf("the upstream said %q (%v)", line, err)
	}
	cfg := exampleCaddyfile(t, "examples/"+name+"/Caddyfile", site)
	if strings.Count(cfg, fixedURL) != 1 {
		t.Fatalf("examples/%s/Caddyfile: no %s to point at the test's upstream", name, fixedURL)
	}
	return startGateway(t, strings.Replace(cfg, fixedURL, url, 1))
}

// TestExampleSQLAgent runs examples/sql-agent as its README says: the
// schema, its role and policies, the Caddyfile as written; two tenants
// through the agent's own SQL, the guardrails, the interceptor, the
// guard and the cost guard.
func TestExampleSQLAgent(t *testing.T) {
	t.Chdir("..")
	conn := testservices.PostgresConn(t)
	schema, err := os.ReadFile("examples/sql-agent/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	testservices.PostgresExec(t, conn, "DROP SCHEMA IF EXISTS sql_agent_demo CASCADE")
	testservices.PostgresExec(t, conn, string(schema))
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS sql_agent_demo CASCADE") })
	secret := "sql-agent-example-test-secret-0123456789"
	t.Setenv("SQL_AGENT_JWT_SECRET", secret)
	t.Setenv("SQL_AGENT_DATABASE_URL", testservices.PostgresURLWith(t, "user", "sql_agent_gateway"))
	g := startGateway(t, exampleCaddyfile(t, "examples/sql-agent/Caddyfile", "http://localhost:8084"))

	mint := func(sub, tenant string) string {
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte(secret)}, (&jose.SignerOptions{}).WithType("JWT"))
		if err != nil {
			t.Fatal(err)
		}
		tok, err := jwt.Signed(signer).Claims(map[string]any{"sub": sub, "tenant": tenant, "aud": "sql-agent-example", "exp": time.Now().Add(time.Hour).Unix()}).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	session := func(token string) *rawSession {
		hdr := map[string]string{"Authorization": "Bearer " + token}
		resp, h := (&rawSession{url: g.URL}).postWith(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, hdr)
		if resp.Error != nil {
			t.Fatalf("initialize: %+v", resp.Error)
		}
		return &rawSession{url: g.URL, session: h.Get("Mcp-Session-Id"), version: "2025-11-25"}
	}
	names := `SELECT name FROM sql_agent_demo.customers ORDER BY id`
	for _, tc := range []struct{ sub, tenant, want string }{
		{"alice", "acme", "[[Ada Lovelace] [Grace Hopper]]"},
		{"bob", "globex", "[[Alan Turing]]"},
	} {
		tok := mint(tc.sub, tc.tenant)
		s := session(tok)
		q := func(sql string) rpcResponse { return callAs(t, s, tok, "shop_query", map[string]any{"sql": sql}) }
		refusedWith(t, tc.sub+": query first", q(names), "guardrail: call shop_describe_table first")
		if got := callAs(t, s, tok, "export_customers", nil).tool(t).Content[0].Text; !strings.Contains(got, "@"+tc.tenant+".example") {
			t.Errorf("%s: export before any query: %s", tc.sub, got)
		}
		if got := callAs(t, s, tok, "shop_describe_table", map[string]any{"table": "sql_agent_demo.customers"}).tool(t).Content[0].Text; !strings.Contains(got, `"primary_key":["id"]`) {
			t.Errorf("%s: describe: %s", tc.sub, got)
		}
		if got := fmt.Sprint(decodeAnswer(t, q(names)).Rows); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.sub, got, tc.want)
		}
		if a := decodeAnswer(t, q("recent orders")); len(a.Columns) != 4 || a.RowCount == 0 {
			t.Errorf("%s: recent orders: %+v", tc.sub, a)
		}
		refusedWith(t, tc.sub+": audit_log", q("SELECT * FROM sql_agent_demo.audit_log"), "sql guard")
		refusedWith(t, tc.sub+": email", q("SELECT email FROM sql_agent_demo.customers"), "email addresses are not for the agent")
		refusedWith(t, tc.sub+": delete", q("DELETE FROM sql_agent_demo.customers"), "sql guard")
		refusedWith(t, tc.sub+": cost", q("SELECT count(*) FROM generate_series(1, 1000000) a, generate_series(1, 1000000) b"), "over max_cost 10000")
		refusedWith(t, tc.sub+": export after a query", callAs(t, s, tok, "export_customers", nil), "shop_query has run in it")
	}
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM sql_agent_demo.customers").Scan(&n); err != nil || n != 3 {
		t.Errorf("customers after the refused delete: %d, %v", n, err)
	}
}
