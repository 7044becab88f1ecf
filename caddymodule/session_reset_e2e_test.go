package caddymodule

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestSessionResetProven: through the gateway, on one-connection pools
// with session_reset proven, a statement proven unable to change its
// session is the last thing its backend ran (no reset after it), while a
// statement that changes its session, by set_config (read-write) or
// through a function of the schema's (read_only), is still reset before
// the next call; and read_only still holds for proven statements and
// refuses a write hidden in a function.
func TestSessionResetProven(t *testing.T) {
	admin := testservices.PostgresConn(t)
	s := testservices.PostgresSchema(t, admin)
	for _, q := range []string{
		`CREATE TABLE S.t (id int8 PRIMARY KEY, name text)`,
		`INSERT INTO S.t VALUES (1, 'Ada'), (2, 'Bob')`,
		`CREATE FUNCTION S.leak() RETURNS int STABLE LANGUAGE plpgsql AS $$
			BEGIN PERFORM set_config('statement_timeout', '0', false); RETURN 1; END $$`,
		`CREATE FUNCTION S.write() RETURNS int VOLATILE LANGUAGE sql AS $$ INSERT INTO S.t VALUES (3, 'Eve') RETURNING 1 $$`,
		`CREATE VIEW S.one AS SELECT 1 AS v`,
	} {
		testservices.PostgresExec(t, admin, strings.ReplaceAll(q, "S.", s+"."))
	}
	tool := func(name, conn, statement string) string {
		return fmt.Sprintf("\t\ttool %s {\n\t\t\tdescription %q\n\t\t\tuse %s\n\t\t\tstatement %q\n\t\t\tinput id int default 1\n\t\t}\n",
			name, name, conn, strings.ReplaceAll(statement, "S.", s+"."))
	}
	var tools strings.Builder
	for _, c := range []string{"rw", "ro"} {
		tools.WriteString(tool(c+"-user", c, "SELECT id, name FROM S.t WHERE id = {{ inputs.id }}"))
		tools.WriteString(tool(c+"-pid", c, "SELECT pg_backend_pid() AS v"))
		tools.WriteString(tool(c+"-timeout", c, "SELECT current_setting('statement_timeout') AS v"))
		tools.WriteString(tool(c+"-path", c, "SELECT current_setting('search_path') AS v"))
		tools.WriteString(tool(c+"-read-only", c, "SELECT current_setting('transaction_read_only') AS v"))
		tools.WriteString(tool(c+"-leak", c, "SELECT S.leak() AS v"))
	}
	tools.WriteString(tool("rw-set-path", "rw", "SELECT set_config('search_path', 'pg_catalog', false) AS v"))
	tools.WriteString(tool("ro-write", "ro", "SELECT S.write() AS v"))
	tools.WriteString(tool("ro-view", "ro", "SELECT v FROM S.one"))
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		connector rw postgres %q {
			max_conns 1
			statement_timeout 1234ms
			session_reset proven
		}
		connector ro postgres %q {
			max_conns 1
			read_only
			statement_timeout 1234ms
			session_reset proven 10m
		}
%s	}
}`, postgresURL(t), postgresURL(t), tools.String()))
	sess := g.rawSession(t, "2025-11-25")
	value := func(tool string) any {
		t.Helper()
		rows := sess.call(t, tool, map[string]any{}).tool(t).rows(t)
		if len(rows) != 1 {
			t.Fatalf("%s: rows %v", tool, rows)
		}
		if v, ok := rows[0]["v"]; ok {
			return v
		}
		return rows[0]["name"]
	}
	ctx := context.Background()
	lastQuery := func(pid any) string {
		t.Helper()
		var q string
		if err := admin.QueryRow(ctx, "SELECT query FROM pg_stat_activity WHERE pid = $1", pid).Scan(&q); err != nil {
			t.Fatal(err)
		}
		return q
	}

	for _, c := range []string{"rw", "ro"} {
		pid := value(c + "-pid")
		pathBefore := value(c + "-path")
		// The first call is reset and its statement proven (the proof
		// holds the one connection until it is done); the second runs
		// alone, read_only's too (its session is read-only, so it needs
		// no BEGIN READ ONLY ... COMMIT): its own statement is the last.
		value(c + "-user")
		if v := value(c + "-user"); v != "Ada" {
			t.Fatalf("%s-user: %v", c, v)
		}
		last := lastQuery(pid)
		if !strings.HasPrefix(last, "SELECT id, name FROM") {
			t.Errorf("%s: a proven statement was followed by %q, want no reset after it", c, last)
		}

		// A function of the schema's that sets statement_timeout: never
		// proven, reset every time.
		for range 2 {
			value(c + "-leak")
			if v := value(c + "-timeout"); v != "1234ms" {
				t.Errorf("%s: statement_timeout after a call whose function set it: %v, want 1234ms", c, v)
			}
		}
		if c == "rw" { // set_config itself: refused at load on read_only
			for range 2 {
				value("rw-set-path")
				if v := value("rw-path"); v != pathBefore {
					t.Errorf("search_path after a call that set it: %v, want %v", v, pathBefore)
				}
			}
		}
	}

	// read_only holds with proofs: a proven statement's transaction is
	// read-only, and a write inside a function is refused.
	for range 2 {
		if v := value("ro-read-only"); v != "on" {
			t.Errorf("transaction_read_only of a proven read_only call: %v, want on", v)
		}
	}
	for range 2 {
		r := sess.call(t, "ro-write", map[string]any{})
		if r.Error == nil || !strings.Contains(r.Error.Message, "SQLSTATE 25006") {
			t.Errorf("a write inside a function on read_only: %+v, want SQLSTATE 25006", r.Error)
		}
	}
	// A proven statement runs without BEGIN READ ONLY; the session's
	// default_transaction_read_only still refuses a write that a schema
	// change within the proof's life put behind it.
	pid := value("ro-pid")
	value("ro-view")
	value("ro-view")
	if last := lastQuery(pid); !strings.HasPrefix(last, "SELECT v FROM") {
		t.Fatalf("ro-view was not proven: its backend last ran %q", last)
	}
	testservices.PostgresExec(t, admin, "CREATE OR REPLACE VIEW "+s+".one AS SELECT "+s+".write() AS v")
	for range 2 {
		r := sess.call(t, "ro-view", map[string]any{})
		if r.Error == nil || !strings.Contains(r.Error.Message, "SQLSTATE 25006") {
			t.Errorf("a write behind a proven view on read_only: %+v, want SQLSTATE 25006", r.Error)
		}
	}
	var n int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM "+s+".t").Scan(&n); err != nil || n != 2 {
		t.Errorf("rows after the refused write: %d %v, want 2", n, err)
	}
}

// TestSessionResetRefusedAtProvision: a JSON config skips the Caddyfile's
// checks; Provision refuses session_reset where it does not apply or is
// malformed.
func TestSessionResetRefusedAtProvision(t *testing.T) {
	g := startGateway(t, `SITE {
	mcp /mcp {
		connector lite sqlite ":memory:"
	}
}`)
	load := func(connector string) error {
		cfg := fmt.Sprintf(`{"admin":{"disabled":true},"apps":{"http":{"servers":{"srv0":{"listen":["127.0.0.1:%d"],"routes":[{"handle":[
			{"handler":"mcp","connectors":[%s]}]}]}}}}}`, g.port, connector)
		return caddy.Load([]byte(cfg), true)
	}
	for _, tc := range []struct{ name, connector, want string }{
		{"on sqlite", `{"name":"lite","type":"sqlite","dsn":":memory:","session_reset":"proven"}`,
			`connector "lite": session_reset is for connectors that reset their session after every call and can prove a statement needs none (postgres), not sqlite`},
		{"life on mysql", `{"name":"my","type":"mysql","dsn":"root@tcp(127.0.0.1:1)/x","session_reset_life":"5m"}`,
			`connector "my": session_reset is for connectors`},
		{"unknown mode", `{"name":"pg","type":"postgres","dsn":"postgres://x@127.0.0.1:1/x","session_reset":"never"}`,
			`session_reset "never": want always or proven`},
		{"life out of bounds", `{"name":"pg","type":"postgres","dsn":"postgres://x@127.0.0.1:1/x","session_reset":"proven","session_reset_life":"2h"}`,
			`session_reset proven: life 2h0m0s is out of bounds`},
		{"life without proven", `{"name":"pg","type":"postgres","dsn":"postgres://x@127.0.0.1:1/x","session_reset_life":"1m"}`,
			`session_reset: a life is for proven`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := load(tc.connector); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("load: %v\nwant %q", err, tc.want)
			}
		})
	}
}
