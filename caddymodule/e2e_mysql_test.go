package caddymodule

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// mysqlCaddyfile declares a read-only and a writable MySQL connector on
// the test server and tools over table tbl.
func mysqlCaddyfile(t *testing.T, tbl string) string {
	dsn := testservices.MySQLDSN(t)
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		connector shop mysql %[1]q {
			read_only
			max_conns 4
			statement_timeout 5s
		}
		connector shoprw mysql %[1]q {
			max_conns 2
		}
		tool get-item {
			description "Fetch an item"
			use shop
			statement "SELECT id, name, price, added, tags, photo FROM %[2]s WHERE id = {{ inputs.id }}"
			input id int required
		}
		tool sneaky-ro {
			description "A write hidden in a function, through the read-only connector"
			use shop
			statement "SELECT %[2]s_w({{ inputs.id }}, {{ inputs.name }}) AS n"
			input id int required
			input name string required
		}
		tool mysql-exact {
			description "injection probe"
			use shoprw
			statement "SELECT id, name FROM %[2]s WHERE CAST(name AS BINARY) = CAST({{ inputs.name }} AS BINARY) ORDER BY id"
			input name string required
		}
		tool mysql-contains {
			description "injection probe"
			use shoprw
			statement "SELECT id, name FROM %[2]s WHERE LOCATE(CAST({{ inputs.name }} AS BINARY), CAST(name AS BINARY)) > 0 ORDER BY id"
			input name string required
		}
		tool mysql-by-id {
			description "injection probe"
			use shoprw
			statement "SELECT id FROM %[2]s WHERE id = {{ inputs.id }}"
			input id int required
		}
	}
}`, dsn, tbl)
}

func mysqlItems(t *testing.T) (tbl, canary string) {
	t.Helper()
	tbl = testservices.MySQLTable(t, "e2e")
	canary = testservices.MySQLTable(t, "canary")
	testservices.MySQLExec(t, "CREATE TABLE "+tbl+` (id INT PRIMARY KEY, name VARCHAR(255) NOT NULL,
		price DECIMAL(10,2), added DATETIME, tags JSON, photo BLOB)`)
	testservices.MySQLExec(t, "CREATE TABLE "+canary+" (x INT)")
	// A write the load-time checks cannot see (it is inside a function):
	// the server's READ ONLY transaction is the guard that refuses it.
	testservices.MySQLExec(t, "CREATE FUNCTION "+tbl+"_w(i INT, n VARCHAR(255)) RETURNS INT MODIFIES SQL DATA BEGIN INSERT INTO "+tbl+" (id, name) VALUES (i, n); RETURN 1; END")
	t.Cleanup(func() { testservices.MySQLExec(t, "DROP FUNCTION IF EXISTS "+tbl+"_w") })
	for i, n := range injectionRows {
		testservices.MySQLExec(t, "INSERT INTO "+tbl+" (id, name) VALUES (?, ?)", i+1, n)
	}
	testservices.MySQLExec(t, "UPDATE "+tbl+` SET price = 12.50, added = '2024-01-02 03:04:05', tags = '["a"]', photo = x'CAFE' WHERE id = 1`)
	return tbl, canary
}

// TestEndToEndMySQL: a typed row through the in-process Caddy and mcp-go's
// client, and the read-only refusals as -32000 with the data unchanged.
func TestEndToEndMySQL(t *testing.T) {
	tbl, _ := mysqlItems(t)
	g := startGateway(t, mysqlCaddyfile(t, tbl))
	c := g.mcpClient(t)
	req := mcp.CallToolRequest{}
	req.Params.Name = "get-item"
	req.Params.Arguments = map[string]any{"id": 1}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// MariaDB reports JSON columns as text; MySQL as JSON.
	text := res.Content[0].(mcp.TextContent).Text
	wantMaria := `[{"id":1,"name":"apple","price":12.50,"added":"2024-01-02T03:04:05","tags":"[\"a\"]","photo":"yv4="}]`
	wantMySQL := `[{"id":1,"name":"apple","price":12.50,"added":"2024-01-02T03:04:05","tags":["a"],"photo":"yv4="}]`
	if text != wantMaria && text != wantMySQL {
		t.Errorf("get-item text\n got %s\nwant %s", text, wantMaria)
	}

	s := g.rawSession(t, "2025-11-25")
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"sneaky-ro", map[string]any{"id": 99, "name": "intruder"}},
	} {
		r := s.call(t, tc.tool, tc.args)
		// ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION, shown by its number
		// (error_detail safe, the default).
		if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "(error 1792, SQLSTATE 25006, request_id ") {
			t.Errorf("%s on the read-only connector: %+v, want -32000 with the server's READ ONLY refusal", tc.tool, r.Error)
		}
	}
	// A plain write on the read-only connector never gets that far: the
	// load fails, and the running config keeps serving.
	err = g.load(strings.Replace(mysqlCaddyfile(t, tbl), `statement "SELECT id, name, price, added, tags, photo FROM`, `statement "INSERT INTO `+tbl+` (id) VALUES (7)" #`, 1))
	if err == nil || !strings.Contains(err.Error(), "INSERT is not a query") {
		t.Errorf("INSERT on a read_only mysql connector: load error %v", err)
	}
	if r := s.call(t, "get-item", map[string]any{"id": 1}); r.Error != nil {
		t.Errorf("after the refused load: %+v", r.Error)
	}
	var n int
	var names string
	if err := testservices.MySQLDB(t).QueryRow("SELECT COUNT(*), GROUP_CONCAT(name ORDER BY id SEPARATOR '|') FROM "+tbl).Scan(&n, &names); err != nil {
		t.Fatal(err)
	}
	if n != len(injectionRows) || names != strings.Join(injectionRows, "|") {
		t.Errorf("table changed: %d rows %q", n, names)
	}
}

// TestInjectionCorpusMySQL sends the core issue's corpus (backslashes and
// all) through a writable MySQL connector: every payload behaves as the
// literal string it is, and nothing is changed or dropped.
func TestInjectionCorpusMySQL(t *testing.T) {
	tbl, canary := mysqlItems(t)
	g := startGateway(t, mysqlCaddyfile(t, tbl))
	s := g.rawSession(t, "2025-11-25")
	for i, payload := range injectionCorpus {
		for _, tool := range []string{"mysql-exact", "mysql-contains"} {
			want := expectedNames(payload, strings.HasSuffix(tool, "contains"))
			r := s.call(t, tool, map[string]any{"name": payload})
			if r.Error != nil {
				t.Errorf("payload %d %.40q on %s: error %d %s", i, payload, tool, r.Error.Code, r.Error.Message)
				continue
			}
			got := []string{}
			for _, row := range r.tool(t).rows(t) {
				got = append(got, row["name"].(string))
			}
			if strings.Join(got, "\x01") != strings.Join(want, "\x01") {
				t.Errorf("payload %d %.40q on %s: rows %q, want %q", i, payload, tool, got, want)
			}
		}
		if r := s.call(t, "mysql-by-id", map[string]any{"id": payload}); r.Error == nil && payload != "-0" {
			t.Errorf("payload %d %.40q as int: accepted", i, payload)
		}
	}
	var n int
	if err := testservices.MySQLDB(t).QueryRow("SELECT COUNT(*) FROM " + tbl).Scan(&n); err != nil || n != len(injectionRows) {
		t.Fatalf("items after the corpus: %d rows, %v", n, err)
	}
	if err := testservices.MySQLDB(t).QueryRow("SELECT COUNT(*) FROM " + canary).Scan(&n); err != nil {
		t.Fatalf("canary table: %v", err)
	}
}

// TestMySQLConfigRefusedAtLoad: DSN options that would splice values or
// allow several statements fail the load with a message that names the
// option and not the password.
func TestMySQLConfigRefusedAtLoad(t *testing.T) {
	tbl, _ := mysqlItems(t)
	g := startGateway(t, mysqlCaddyfile(t, tbl))
	for _, opt := range []string{"interpolateParams", "multiStatements"} {
		err := g.load(fmt.Sprintf("SITE {\n\tmcp /mcp {\n\t\tconnector shoprw mysql \"mysql://u:hunter2@127.0.0.1:3306/test?%s=true\"\n\t}\n}\n", opt))
		if err == nil || !strings.Contains(err.Error(), `connector "shoprw" (mysql): `+opt+`=true is not allowed`) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: load error %v", opt, err)
		}
	}
}

// TestEndToEndMySQLClientGoneKillsStatement: an MCP client that
// disconnects mid-call gets its statement stopped on the server (KILL
// QUERY), on the read-only connector's transaction path too.
func TestEndToEndMySQLClientGoneKillsStatement(t *testing.T) {
	tbl, _ := mysqlItems(t)
	marker := strings.Replace(tbl, "_e2e_", "_gone_", 1)
	// The slow tool sleeps on the read_only connector: no default block list.
	cf := strings.Replace(mysqlCaddyfile(t, tbl), "\t\t\tread_only\n", "\t\t\tread_only\n\t\t\tblock_functions none\n", 1)
	g := startGateway(t, strings.Replace(cf, "\t\ttool get-item {", `		tool slow {
			description "Sleeps"
			use shop
			statement "SELECT SLEEP({{ inputs.seconds }}) AS `+"`"+marker+"`"+`"
			input seconds int required
		}
		tool get-item {`, 1))
	s := g.rawSession(t, "2025-11-25")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	body := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{"seconds":30}}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("the 30 s call returned within 500 ms")
	}
	// MariaDB notices a closed client during SLEEP only every 5 s: gone
	// within 2 s means the KILL did it.
	deadline := time.Now().Add(2 * time.Second)
	for {
		var n int
		if err := testservices.MySQLDB(t).QueryRow(
			"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE CONCAT('%', ?, '%') AND INFO NOT LIKE '%PROCESSLIST%'", marker).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d SLEEP statements still running 2 s after the client left", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The pool still serves.
	if rows := s.call(t, "get-item", map[string]any{"id": 1}).tool(t).rows(t); len(rows) != 1 {
		t.Errorf("get-item after the cancel: %v", rows)
	}
}
