package redis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline/cmdtemplate"
)

func open(t testing.TB, cfg Config) *Connector {
	t.Helper()
	if cfg.URL == "" {
		cfg.URL = testservices.RedisURL(t)
	}
	c, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func do(t *testing.T, c *Connector, args ...string) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := c.Do(ctx, args)
	if err != nil {
		t.Fatalf("Do(%q): %v", args, err)
	}
	return v
}

func doErr(t *testing.T, c *Connector, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.Do(ctx, args)
	return conntest.PublicErr(t, err).Public
}

// TestReplies: every reply shape maps to JSON.
func TestReplies(t *testing.T) {
	c := open(t, Config{})
	p := testservices.RedisPrefix(t)
	do(t, c, "SET", p+"s", "hello")
	do(t, c, "SET", p+"big", "9007199254740993")
	do(t, c, "HSET", p+"h", "name", "Ada", "lang", "en")
	do(t, c, "RPUSH", p+"l", "a", "b", "c")
	do(t, c, "ZADD", p+"z", "1.5", "x", "2", "y")
	do(t, c, "SADD", p+"set", "only")

	for _, tc := range []struct {
		name string
		args []string
		want any
	}{
		{"bulk string", []string{"GET", p + "s"}, "hello"},
		{"nil", []string{"GET", p + "missing"}, nil},
		{"simple string", []string{"PING"}, "PONG"},
		{"integer", []string{"STRLEN", p + "s"}, int64(5)},
		{"integer beyond 2^53", []string{"INCRBY", p + "big", "0"}, "9007199254740993"},
		{"map", []string{"HGETALL", p + "h"}, map[string]any{"name": "Ada", "lang": "en"}},
		{"empty map", []string{"HGETALL", p + "nohash"}, map[string]any{}},
		{"array", []string{"LRANGE", p + "l", "0", "-1"}, []any{"a", "b", "c"}},
		{"array with nil", []string{"MGET", p + "s", p + "missing"}, []any{"hello", nil}},
		{"double", []string{"ZSCORE", p + "z", "x"}, 1.5},
		{"pairs with scores", []string{"ZRANGE", p + "z", "0", "-1", "WITHSCORES"}, []any{[]any{"x", 1.5}, []any{"y", float64(2)}}},
		{"set", []string{"SMEMBERS", p + "set"}, []any{"only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conntest.SameValue(t, tc.name, do(t, c, tc.args...), tc.want)
		})
	}
}

// TestArgumentsAreOpaque: a value with spaces, quotes, newlines or RESP
// framing is one argument, stored and read back byte for byte, and it
// never runs as a command.
func TestArgumentsAreOpaque(t *testing.T) {
	c := open(t, Config{})
	p := testservices.RedisPrefix(t)
	do(t, c, "SET", p+"canary", "alive")
	cmd, err := cmdtemplate.Compile("SET "+p+"v:{{ inputs.k }} {{ inputs.v }}", cmdtemplate.Options{Inputs: map[string]bool{"k": true, "v": true}})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range []string{
		"two words", `"quoted" 'single'`, "line1\nline2", "crlf\r\nDEL " + p + "canary\r\n",
		"\r\n*2\r\n$3\r\nDEL\r\n$" + "3\r\nabc\r\n", "PX 1", "NX", "", "\x00binary\xff", strings.Repeat("x", 100000),
	} {
		args, err := cmd.Render(map[string]any{"k": v, "v": v})
		if err != nil {
			t.Fatal(err)
		}
		if len(args) != 3 {
			t.Fatalf("%q: %d arguments", v, len(args))
		}
		do(t, c, args...)
		conntest.SameValue(t, "read back", do(t, c, "GET", p+"v:"+v), v)
		if ttl := do(t, c, "PTTL", p+"v:"+v); ttl != int64(-1) {
			t.Errorf("value %d became an option: PTTL %v", i, ttl)
		}
	}
	conntest.SameValue(t, "canary", do(t, c, "GET", p+"canary"), "alive")
}

func compile(t *testing.T, src string) *cmdtemplate.Command {
	t.Helper()
	cmd, err := cmdtemplate.Compile(src, cmdtemplate.Options{Inputs: map[string]bool{"x": true}})
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}

// TestCheckCommand: the load-time rules.
func TestCheckCommand(t *testing.T) {
	ro := &Connector{readOnly: true}
	rw := &Connector{}
	for _, tc := range []struct {
		c    *Connector
		src  string
		want string // "" = allowed
	}{
		{ro, "GET k:{{ inputs.x }}", ""},
		{ro, "hgetall k", ""},
		{ro, "ZRANGE b 0 {{ inputs.x }} WITHSCORES", ""},
		{ro, "OBJECT ENCODING k", ""},
		{ro, "SET k {{ inputs.x }}", "SET is not a read-only command"},
		{ro, "del k", "DEL is not a read-only command"},
		{ro, "EVAL_RO 'return 1' 0", "EVAL_RO is not a read-only command"},
		{ro, "KEYS *", "KEYS is not a read-only command"},
		{ro, "OBJECT {{ inputs.x }} k", "read-only subcommands"},
		{ro, "OBJECT FREQ k", ""},
		{ro, "SELECT 2", "SELECT cannot be a tool's command"},
		{rw, "SET k {{ inputs.x }}", ""},
		{rw, "MULTI", "MULTI cannot be a tool's command"},
		{rw, "subscribe ch", "SUBSCRIBE cannot be a tool's command"},
		{rw, "CLIENT KILL ID 1", "CLIENT cannot be a tool's command"},
	} {
		t.Run(tc.src, func(t *testing.T) {
			err := tc.c.CheckCommand(compile(t, tc.src))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestMaxRows(t *testing.T) {
	c := open(t, Config{MaxRows: 3})
	p := testservices.RedisPrefix(t)
	do(t, c, "RPUSH", p+"l", "a", "b", "c", "d")
	conntest.SameValue(t, "3 elements", do(t, c, "LRANGE", p+"l", "0", "2"), []any{"a", "b", "c"})
	if msg := doErr(t, c, "LRANGE", p+"l", "0", "-1"); !strings.Contains(msg, "max_rows") {
		t.Errorf("error %q", msg)
	}
}

// TestMaxResultSize: a reply counts its strings' bytes plus 16 per value
// (the array or map itself included), so at 1000 bytes a 984-byte string
// passes and a 985-byte one fails, as does a list of three 312-byte
// elements and a fourth; the map of HGETALL counts its keys too.
func TestMaxResultSize(t *testing.T) {
	c := open(t, Config{MaxResultSize: 1000})
	p := testservices.RedisPrefix(t)
	want := "the result is larger than 1000 bytes (max_result_size); narrow the statement (fewer rows, columns or elements) or raise max_result_size"
	do(t, c, "SET", p+"under", strings.Repeat("x", 984))
	do(t, c, "SET", p+"over", strings.Repeat("x", 985))
	conntest.SameValue(t, "984 bytes", do(t, c, "STRLEN", p+"under"), int64(984))
	do(t, c, "GET", p+"under")
	if msg := doErr(t, c, "GET", p+"over"); msg != want {
		t.Errorf("GET over max_result_size: %q", msg)
	}
	e := strings.Repeat("y", 312)
	do(t, c, "RPUSH", p+"l", e, e, e, e)
	do(t, c, "LRANGE", p+"l", "0", "2")
	if msg := doErr(t, c, "LRANGE", p+"l", "0", "3"); msg != want {
		t.Errorf("LRANGE over max_result_size: %q", msg)
	}
	// 16 + 2 * (16 + 4 + 16 + 460) = 1008
	do(t, c, "HSET", p+"h", "k001", strings.Repeat("z", 460), "k002", strings.Repeat("z", 460))
	if msg := doErr(t, c, "HGETALL", p+"h"); msg != want {
		t.Errorf("HGETALL over max_result_size: %q", msg)
	}
	do(t, c, "HSET", p+"h", "k002", strings.Repeat("z", 452)) // 1000
	do(t, c, "HGETALL", p+"h")
}

func TestErrorReplies(t *testing.T) {
	c := open(t, Config{})
	p := testservices.RedisPrefix(t)
	do(t, c, "SET", p+"s", "x")
	if msg := doErr(t, c, "HGETALL", p+"s"); !strings.HasPrefix(msg, "WRONGTYPE") {
		t.Errorf("error %q", msg)
	}
	if msg := doErr(t, c, "NOSUCHCOMMAND", "x"); !strings.Contains(msg, "unknown command") {
		t.Errorf("error %q", msg)
	}
	// The reply's prefix is the code error_detail safe shows.
	for _, tc := range []struct {
		args []string
		code string
	}{
		{[]string{"HGETALL", p + "s"}, "WRONGTYPE"},
		{[]string{"INCR", p + "s"}, "ERR"},
	} {
		_, err := c.Do(context.Background(), tc.args)
		if pe := conntest.PublicErr(t, err); pe.Code != tc.code {
			t.Errorf("%v: code %q, want %q (public %q)", tc.args, pe.Code, tc.code, pe.Public)
		}
	}
	// Our own texts carry no server code.
	if code := replyPrefix("lowercase reply"); code != "ERR" {
		t.Errorf("reply without a prefix: code %q", code)
	}
}

// TestCommandTimeout: a command that outlives statement_timeout fails
// with "command timed out", and the pool still serves.
func TestCommandTimeout(t *testing.T) {
	c := open(t, Config{StatementTimeout: 200 * time.Millisecond})
	p := testservices.RedisPrefix(t)
	start := time.Now()
	if msg := doErr(t, c, "BLPOP", p+"empty", "5"); msg != msgStmtTimeout {
		t.Errorf("error %q, want %q", msg, msgStmtTimeout)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	conntest.SameValue(t, "after timeout", do(t, c, "PING"), "PONG")
}

// TestUnavailable: a closed port or a wrong password is "database
// unavailable", without the password or address.
func TestUnavailable(t *testing.T) {
	for _, tc := range []struct{ name, url string }{
		{"closed port", "redis://:hunter2@127.0.0.1:1/0"},
		{"wrong password", "redis://edgemcp_nouser:hunter2@" + strings.TrimPrefix(strings.TrimSuffix(testservices.RedisURL(t), "/0"), "redis://") + "/0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := open(t, Config{URL: tc.url})
			if msg := doErr(t, c, "PING"); msg != msgUnavailable {
				t.Errorf("error %q, want %q", msg, msgUnavailable)
			}
		})
	}
}

func TestBadURL(t *testing.T) {
	_, err := Open(context.Background(), Config{URL: "http://u:hunter2@h/0"})
	if pe := conntest.PublicErr(t, err); strings.Contains(pe.Public, "hunter2") || !strings.Contains(pe.Public, "invalid redis URL") {
		t.Errorf("error %q", pe.Public)
	}
}
