package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	goredis "github.com/redis/go-redis/v9"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

func redisCaddyfile(url, p string, extra string) string {
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		connector kv redis %[1]q {
			read_only
			statement_timeout 2s
		}
		connector kvrw redis %[1]q {
			max_conns 4
		}
		tool get-user {
			description "A user's profile"
			use kv
			statement "HGETALL %[2]suser:{{ inputs.id }}"
			input id int required
		}
		tool top {
			description "Best players of a board"
			use kv
			statement <<CMD
				ZRANGE "%[2]sboard:{{ inputs.board }}" 0 {{ inputs.n }} REV WITHSCORES
				CMD
			input board string required
			input n int default 1
		}
		tool set-note {
			description "Store a note"
			use kvrw
			statement "SET %[2]snote:{{ inputs.key }} {{ inputs.value }}"
			input key string required
			input value string required
		}
		tool get-note {
			description "Read a note"
			use kv
			statement "GET %[2]snote:{{ inputs.key }}"
			input key string required
		}
%[3]s
	}
}`, url, p, extra)
}

// TestEndToEndRedis: replies as JSON through the in-process Caddy and
// mcp-go's client; values with spaces, quotes, newlines and RESP framing
// stay one argument; a write on the read-only connector fails the load.
func TestEndToEndRedis(t *testing.T) {
	url := testservices.RedisURL(t)
	p := testservices.RedisPrefix(t)
	rc := testservices.RedisClient(t)
	ctx := context.Background()
	rc.HSet(ctx, p+"user:1", "name", "Ada", "lang", "en")
	rc.ZAdd(ctx, p+"board:main", redisZ(1.5, "x")...)
	rc.ZAdd(ctx, p+"board:main", redisZ(3, "y")...)
	rc.Set(ctx, p+"canary", "alive", 0)

	g := startGateway(t, redisCaddyfile(url, p, ""))
	c := g.mcpClient(t)
	call := func(name string, args map[string]any) string {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name = name
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res.Content[0].(mcp.TextContent).Text
	}
	if got := call("get-user", map[string]any{"id": 1}); got != `{"lang":"en","name":"Ada"}` {
		t.Errorf("get-user: %s", got)
	}
	if got := call("top", map[string]any{"board": "main"}); got != `[["y",3],["x",1.5]]` {
		t.Errorf("top: %s", got)
	}
	if got := call("get-note", map[string]any{"key": "none"}); got != `null` {
		t.Errorf("missing key: %s", got)
	}

	for _, v := range []string{
		"two words", `"double" and 'single' quotes`, "line1\nline2\r\nline3",
		"x\r\nDEL " + p + "canary\r\n", "\r\n*2\r\n$3\r\nDEL\r\n$6\r\ncanary\r\n", "EX 1", "",
	} {
		key := "k " + v
		if got := call("set-note", map[string]any{"key": key, "value": v}); got != `"OK"` {
			t.Errorf("set-note %q: %s", v, got)
		}
		want, _ := json.Marshal(v)
		if got := call("get-note", map[string]any{"key": key}); got != string(want) {
			t.Errorf("get-note %q: %s, want %s", v, got, want)
		}
		if ttl := rc.PTTL(ctx, p+"note:"+key).Val(); ttl != -1 {
			t.Errorf("value %q became an option: PTTL %v", v, ttl)
		}
	}
	if v := rc.Get(ctx, p+"canary").Val(); v != "alive" {
		t.Errorf("canary: %q", v)
	}

	// The read-only connector's tools carry the hint; a write on it is a
	// load error (the running config stays).
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		ro := tool.Annotations.ReadOnlyHint
		if want := tool.Name != "set-note"; want != (ro != nil && *ro) {
			t.Errorf("%s: readOnlyHint %v", tool.Name, ro)
		}
	}
	err = g.load(redisCaddyfile(url, p, `		tool del-note {
			description "Delete a note"
			use kv
			statement "SET {{ inputs.key }} gone"
			input key string required
		}`))
	if err == nil || !strings.Contains(err.Error(), `tool "del-note": statement on connector "kv": SET is not a read-only command`) {
		t.Errorf("write on a read-only connector: load error %v", err)
	}
	if got := call("get-note", map[string]any{"key": "k two words"}); got != `"two words"` {
		t.Errorf("after the refused reload: %s", got)
	}
}

// TestEndToEndRedisErrors: a server error reply and a missing optional
// input are -32000 stage failures.
func TestEndToEndRedisErrors(t *testing.T) {
	url := testservices.RedisURL(t)
	p := testservices.RedisPrefix(t)
	testservices.RedisClient(t).Set(context.Background(), p+"user:2", "not a hash", 0)
	g := startGateway(t, redisCaddyfile(url, p, `		tool opt {
			description "Optional input"
			use kv
			statement "GET {{ inputs.k }}"
			input k string
		}`))
	s := g.rawSession(t, "2025-11-25")
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get-user", map[string]any{"id": 2}, "execution: command failed (WRONGTYPE, request_id "},
		{"opt", map[string]any{}, `input validation: input "k": no value`},
		{"get-user", map[string]any{"id": "1 OR 1"}, "input validation"},
	} {
		r := s.call(t, tc.tool, tc.args)
		if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, tc.want) {
			t.Errorf("%s %v: %+v, want -32000 %q", tc.tool, tc.args, r.Error, tc.want)
		}
	}
}

func redisZ(score float64, member string) []goredis.Z {
	return []goredis.Z{{Score: score, Member: member}}
}

// TestReloadSharesCommandAndMySQLPools: an unchanged mysql or redis
// connector keeps its pool across a reload (the usage pool path of
// command connectors included); a changed one gets a new pool.
func TestReloadSharesCommandAndMySQLPools(t *testing.T) {
	url := testservices.RedisURL(t)
	p := testservices.RedisPrefix(t)
	tbl, _ := mysqlItems(t)
	cfg := strings.Replace(redisCaddyfile(url, p, ""), "SITE {\n\tmcp /mcp {", "SITE {\n\tmcp /mcp {\n"+
		fmt.Sprintf("\t\tconnector shop mysql %q\n\t\ttool item-name {\n\t\t\tdescription \"An item's name\"\n\t\t\tuse shop\n\t\t\tstatement \"SELECT name FROM %s WHERE id = {{ inputs.id }}\"\n\t\t\tinput id int required\n\t\t}", testservices.MySQLDSN(t), tbl), 1)
	g := startGateway(t, cfg)
	s := g.rawSession(t, "2025-11-25")
	check := func() {
		t.Helper()
		// A reload closes the old server's keep-alive connections; a POST
		// racing that close fails with EOF (Go does not retry a POST).
		http.DefaultClient.CloseIdleConnections()
		if rows := s.call(t, "item-name", map[string]any{"id": 1}).tool(t).rows(t); len(rows) != 1 || rows[0]["name"] != "apple" {
			t.Errorf("item-name: %v", rows)
		}
		if r := s.call(t, "get-note", map[string]any{"key": "x"}).tool(t); r.Content[0].Text != "null" {
			t.Errorf("get-note: %s", r.Content[0].Text)
		}
	}
	check()
	opened := poolsOpenedCount("redis", "mysql")
	if err := g.load(cfg); err != nil {
		t.Fatal(err)
	}
	check()
	if n := poolsOpenedCount("redis", "mysql") - opened; n != 0 {
		t.Errorf("unchanged reload opened %d pools", n)
	}
	if err := g.load(strings.Replace(cfg, "statement_timeout 2s", "statement_timeout 3s", 1)); err != nil {
		t.Fatal(err)
	}
	check()
	if n := poolsOpenedCount("redis", "mysql") - opened; n != 1 {
		t.Errorf("changing one redis connector opened %d pools, want 1", n)
	}
}
