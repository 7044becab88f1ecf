package caddymodule

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestDBSafetyReadOnlyDefaultBlockList runs, on the real servers, each
// statement the default block list of a read_only connector refuses: with
// the list dropped (block_functions none) the database runs it inside its
// READ ONLY transaction, so only the load check stands between a tool and
// the side effect; with the list in place, loading the tool fails and
// names the function.
func TestDBSafetyReadOnlyDefaultBlockList(t *testing.T) {
	db := testDB(t)
	tests := []struct {
		typ, dsn, stmt, fn string
	}{
		{"postgres", postgresURL(t), "SELECT lo_from_bytea(0, 'x'::bytea) AS oid", "lo_from_bytea"},
		{"postgres", postgresURL(t), "SELECT lo_create(0) AS oid", "lo_create"},
		{"postgres", postgresURL(t), "SELECT set_config('search_path', current_setting('search_path'), false) AS v", "set_config"},
		{"postgres", postgresURL(t), "SELECT pg_try_advisory_lock(424242) AND pg_advisory_unlock(424242) AS ok", "pg_try_advisory_lock"},
		{"postgres", postgresURL(t), "SELECT pg_notify('edgemcp_test', 'x') IS NULL AS sent", "pg_notify"},
		{"postgres", postgresURL(t), "SELECT pg_sleep(0) IS NULL AS slept", "pg_sleep"},
		{"postgres", postgresURL(t), "SELECT length(pg_read_file('PG_VERSION')) AS n", "pg_read_file"},
		{"postgres", postgresURL(t), "SELECT count(*) AS n FROM pg_ls_dir('.')", "pg_ls_dir"},
		{"postgres", postgresURL(t), "SELECT (pg_stat_file('PG_VERSION')).size AS n", "pg_stat_file"},
		{"postgres", postgresURL(t), "SELECT pg_cancel_backend(pg_backend_pid() + 1000000) AS done", "pg_cancel_backend"},
		{"postgres", postgresURL(t), "SELECT query_to_xml('select 1 as a', true, false, '')::text AS x", "query_to_xml"},
		{"postgres", postgresURL(t), "SELECT txid_current() > 0 AS assigned", "txid_current"},
		{"postgres", postgresURL(t), "SELECT ts_rewrite('a'::tsquery, 'SELECT ''a''::tsquery, ''b''::tsquery WHERE pg_try_advisory_lock(4242421) IS NOT NULL')::text AS q", "ts_rewrite"},
		{"mysql", testservices.MySQLDSN(t), "SELECT GET_LOCK('edgemcp_test', 0) + RELEASE_LOCK('edgemcp_test') AS n", "get_lock"},
		{"mysql", testservices.MySQLDSN(t), "SELECT RELEASE_ALL_LOCKS() AS n", "release_all_locks"},
		{"mysql", testservices.MySQLDSN(t), "SELECT LOAD_FILE('/etc/hostname') IS NULL AS unreadable", "load_file"},
		{"mysql", testservices.MySQLDSN(t), "SELECT SLEEP(0) AS s", "sleep"},
		{"mysql", testservices.MySQLDSN(t), "SELECT BENCHMARK(1, 1) AS b", "benchmark"},
	}
	conns := map[string]connectorRef{}
	for _, typ := range []string{"postgres", "mysql"} {
		dsn := postgresURL(t)
		if typ == "mysql" {
			dsn = testservices.MySQLDSN(t)
		}
		cfg := ConnectorConfig{Name: typ, Type: typ, DSN: dsn, ReadOnly: true, MaxConns: 1}
		conn, key, err := acquireConnector(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { releaseConnector(key) })
		conns[typ] = connectorRef{config: cfg, conn: conn}
		none := cfg
		none.Name, none.NoDefaultBlocks = typ+"-none", true
		conns[none.Name] = connectorRef{config: none, conn: conn}
	}
	for _, tt := range tests {
		// The database runs it, READ ONLY or not.
		rows, err := conns[tt.typ].conn.Query(context.Background(), tt.stmt, nil)
		if err != nil {
			t.Errorf("%s %q on a read_only connector: %v (the database refuses it: the default list need not)", tt.typ, tt.stmt, err)
			continue
		}
		if strings.HasPrefix(tt.fn, "lo_") {
			// Committed: the large object outlives the READ ONLY call.
			oid := fmt.Sprint(rows.Values[0][0])
			var n int
			if err := db.QueryRow(context.Background(), "SELECT count(*) FROM pg_largeobject_metadata WHERE oid = $1::text::oid", oid).Scan(&n); err != nil || n != 1 {
				t.Errorf("%s: large object %v after the call: count %d, %v", tt.stmt, oid, n, err)
			}
			execSQL(t, db, "SELECT lo_unlink($1::text::oid)", oid)
		}
		// Loading the tool fails, naming the function.
		_, err = buildTool(ToolConfig{Name: "t", Description: "d", Use: tt.typ, Statement: tt.stmt}, conns, caddy.NewReplacer(), nil)
		if want := "calls " + tt.fn + "(), which a read_only connector refuses by default"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s %q: load error %v, want %q", tt.typ, tt.stmt, err, want)
		}
		// block_functions none drops the list.
		if _, err := buildTool(ToolConfig{Name: "t", Description: "d", Use: tt.typ + "-none", Statement: tt.stmt}, conns, caddy.NewReplacer(), nil); err != nil {
			t.Errorf("%s %q with block_functions none: %v", tt.typ, tt.stmt, err)
		}
	}

	// Sequence writes are not listed: READ ONLY refuses them itself.
	seqPG := "edgemcp_ro_seq_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	execSQL(t, db, "CREATE SEQUENCE "+seqPG)
	t.Cleanup(func() { execSQL(t, db, "DROP SEQUENCE IF EXISTS "+seqPG) })
	seqMy := testservices.MySQLTable(t, "seq")
	testservices.MySQLExec(t, "CREATE SEQUENCE "+seqMy)
	for _, tt := range []struct{ typ, stmt, want string }{
		{"postgres", "SELECT nextval('" + seqPG + "')", "25006"},
		{"postgres", "SELECT setval('" + seqPG + "', 5)", "25006"},
		{"mysql", "SELECT NEXTVAL(" + seqMy + ")", "1792"},
		{"mysql", "SELECT SETVAL(" + seqMy + ", 5)", "1792"},
	} {
		if _, err := conns[tt.typ].conn.Query(context.Background(), tt.stmt, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %q on a read_only connector: %v, want the database's refusal (%s)", tt.typ, tt.stmt, err, tt.want)
		}
	}

	// An enum input in function-name position may not offer a listed name.
	enum := ToolConfig{Name: "t", Description: "d", Use: "postgres",
		Statement: "SELECT {{ inputs.fn | ident }}(1) AS x",
		Inputs:    []InputConfig{{Name: "fn", Type: "string", Required: true, Enum: []string{"abs", "pg_advisory_lock"}}}}
	if _, err := buildTool(enum, conns, caddy.NewReplacer(), nil); err == nil || !strings.Contains(err.Error(), "calls pg_advisory_lock(), which a read_only connector refuses by default") {
		t.Errorf("enum offering pg_advisory_lock: %v", err)
	}

	// MariaDB user variables: the assignment is run by the server in READ
	// ONLY, and refused at load.
	if _, err := conns["mysql"].conn.Query(context.Background(), "SELECT @edgemcp_v := 1 AS v", nil); err != nil {
		t.Errorf("@v := on a read_only connector: %v", err)
	}
	_, err := buildTool(ToolConfig{Name: "t", Description: "d", Use: "mysql", Statement: "SELECT @edgemcp_v := 1 AS v"}, conns, caddy.NewReplacer(), nil)
	if err == nil || !strings.Contains(err.Error(), ":= assigns a user variable") {
		t.Errorf("@v := load error: %v", err)
	}

	// SQLite: load_extension is listed although the driver refuses it.
	path := filepath.Join(t.TempDir(), "x.db")
	rw, rwKey, err := acquireConnector(ConnectorConfig{Name: "lite", Type: "sqlite", DSN: path})
	if err != nil {
		t.Fatal(err)
	}
	defer releaseConnector(rwKey)
	if _, err := rw.Query(context.Background(), "CREATE TABLE t (x int)", nil); err != nil {
		t.Fatal(err)
	}
	lite := ConnectorConfig{Name: "lite", Type: "sqlite", DSN: path, ReadOnly: true}
	conn, key, err := acquireConnector(lite)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseConnector(key)
	if _, err := conn.Query(context.Background(), "SELECT load_extension('x') AS x", nil); err == nil || !strings.Contains(err.Error(), "not authorized") {
		t.Errorf("sqlite load_extension: %v, want not authorized", err)
	}
	conns["lite"] = connectorRef{config: lite, conn: conn}
	if _, err := buildTool(ToolConfig{Name: "t", Description: "d", Use: "lite", Statement: "SELECT load_extension('x') AS x"}, conns, caddy.NewReplacer(), nil); err == nil || !strings.Contains(err.Error(), "calls load_extension()") {
		t.Errorf("sqlite load_extension load error: %v", err)
	}
}

// TestDBSafetySessionNotShared: through the gateway, on one-connection
// read-write pools, what one tool call leaves in its database session is
// gone for the next call: a Postgres statement_timeout turned off with
// set_config (allowed off read_only) and an advisory lock; a MariaDB user
// variable and named lock.
func TestDBSafetySessionNotShared(t *testing.T) {
	lock := testservices.MySQLTable(t, "lock")
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		connector pg postgres %q {
			max_conns 1
			statement_timeout 1234ms
		}
		connector my mysql %q {
			max_conns 1
		}
		tool pg-untimed {
			description "Turns the session's statement timeout off"
			use pg
			statement "SELECT set_config('statement_timeout', '0', false) AS v"
		}
		tool pg-timeout {
			description "The session's statement timeout"
			use pg
			statement "SELECT current_setting('statement_timeout') AS v"
		}
		tool pg-lock {
			description "Takes a session advisory lock"
			use pg
			statement "SELECT pg_advisory_lock(4242420) IS NULL AS v"
		}
		tool my-set {
			description "Sets a user variable"
			use my
			statement "SELECT @edgemcp_e2e := {{ inputs.x }} AS v"
			input x int required
		}
		tool my-get {
			description "Reads the user variable"
			use my
			statement "SELECT @edgemcp_e2e AS v"
		}
		tool my-lock {
			description "Takes a named lock"
			use my
			statement "SELECT GET_LOCK('%s', 0) AS v"
		}
	}
}`, postgresURL(t), testservices.MySQLDSN(t), lock))
	s := g.rawSession(t, "2025-11-25")
	value := func(tool string, args any) any {
		t.Helper()
		rows := s.call(t, tool, args).tool(t).rows(t)
		if len(rows) != 1 {
			t.Fatalf("%s: rows %v", tool, rows)
		}
		return rows[0]["v"]
	}
	value("pg-untimed", map[string]any{})
	if v := value("pg-timeout", map[string]any{}); v != "1234ms" {
		t.Errorf("statement_timeout after the previous call's set_config: %v, want 1234ms", v)
	}
	value("pg-lock", map[string]any{})
	var free bool
	if err := testDB(t).QueryRow(context.Background(), "SELECT pg_try_advisory_lock(4242420)").Scan(&free); err != nil || !free {
		t.Errorf("advisory lock after the call that took it: free=%t %v", free, err)
	}
	execSQL(t, testDB(t), "SELECT pg_advisory_unlock_all()")

	if v := value("my-set", map[string]any{"x": 42}); fmt.Sprint(v) != "42" {
		t.Fatalf("my-set: %v", v)
	}
	if v := value("my-get", map[string]any{}); v != nil {
		t.Errorf("user variable set by the previous call: %v, want null", v)
	}
	value("my-lock", map[string]any{})
	// The connection that took the lock is closed rather than reused; the
	// server frees its locks when it has handled the disconnect, which on a
	// loaded machine can come after this check's first query.
	var myFree int64
	for deadline := time.Now().Add(10 * time.Second); ; {
		if err := testservices.MySQLDB(t).QueryRow("SELECT IS_FREE_LOCK(?)", lock).Scan(&myFree); err != nil || myFree == 1 || time.Now().After(deadline) {
			if err != nil || myFree != 1 {
				t.Errorf("named lock after the call that took it: free=%d %v", myFree, err)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
}
