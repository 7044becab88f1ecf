package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// scriptFiles writes the test scripts under a temporary scripts_dir.
func scriptFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, content)
	}
	return dir
}

// pgTypeExprs cover the Postgres types the connector normalizes; the
// mapped tool must return exactly what the plain tool returns.
var pgTypeExprs = []string{
	"NULL::int8", "true", "42::int2", "-7::int4", "9007199254740992::int8", "9007199254740993::int8",
	"1.5::float8", "0.1::float4", "'NaN'::float8", "'Infinity'::float8",
	"1.50::numeric", "-0.000123::numeric", "1e21::numeric", "123456789012345678901234567890::numeric",
	"1234567890.12345678901234567890::numeric", "'NaN'::numeric",
	"'héllo'::text", "'ab'::char(4)", "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid", `'\xdeadbeef'::bytea`,
	`'{"b":1,  "a":[1,2.50,12345678901234567890]}'::json`, `'{"b":1,"a":[1,2.5]}'::jsonb`, `'null'::jsonb`,
	"'2024-05-01 12:34:56.789+02'::timestamptz", "'2024-05-01 12:34:56'::timestamp", "'2024-05-01'::date",
	"'12:34:56'::time", "'1 day 02:03:04'::interval", "'{1,2,NULL}'::int4[]", "'{a,b}'::text[]",
	"'192.168.0.1/24'::inet", "'(1,2)'::point", "'[1,5)'::int4range",
}

func TestScriptsEndToEnd(t *testing.T) {
	var cols []string
	for i, e := range pgTypeExprs {
		cols = append(cols, fmt.Sprintf("%s AS c%02d", e, i))
	}
	dir := scriptFiles(t, map[string]string{
		"same/in.js":  `export default ({inputs}) => inputs`,
		"same/out.js": `export default ({results}) => results`,
		"user/input.ts": `export default function ({inputs, tool}: {inputs: {id?: number, user_id?: number}, tool: {name: string}}) {
			if (inputs.id === 13) throw new Error('user 13 is private')
			if (inputs.id === 14) return 'not an object'
			if (inputs.id === 15) return {user_id: 'abc'}
			return {user_id: inputs.id ?? inputs.user_id}
		}`,
		"user/output.js": `import { label } from './lib.js'
			export default ({results, tool, auth}) => {
				if (results.length === 0) throw new Error('no such user')
				return results.map(r => ({label: label(r), tool: tool.name, auth}))
			}`,
		"user/lib.js":      `export const label = (r) => r.name + ' <' + r.email + '>'`,
		"pixel/handler.js": `export default ({inputs}) => ({content: [{type: 'image', data: 'iVBORw0KGgoAAAANSUhEUg==', mimeType: 'image/png'}, {type: 'text', text: 'size ' + inputs.size}]})`,
		"greet/handler.ts": `export default async ({inputs}: {inputs: {name: string}}) => ({greeting: 'Hello, ' + inputs.name + '!', big: 9007199254740993n})`,
		"fail/handler.js": `export default ({inputs}) => {
			if (inputs.mode === 'spin') { while (true) {} }
			if (inputs.mode === 'regex') return /^((a+)+)\2?$/.test('a'.repeat(24) + '!')
			if (inputs.mode === 'repeat') return 'x'.repeat(2 ** 29).length
			throw new Error('kaput: ' + inputs.mode)
		}`,
		"fail-after/output.js": `export default () => { throw new TypeError('cannot shape') }`,
	})
	db := testDB(t)
	execSQL(t, db, `DROP SCHEMA IF EXISTS edgemcp_scripts CASCADE`)
	execSQL(t, db, `CREATE SCHEMA edgemcp_scripts`)
	execSQL(t, db, `CREATE TABLE edgemcp_scripts.users (id int8 PRIMARY KEY, name text, email text)`)
	execSQL(t, db, `INSERT INTO edgemcp_scripts.users VALUES (1, 'Ada', 'ada@example.com')`)
	t.Cleanup(func() { execSQL(t, testDB(t), `DROP SCHEMA IF EXISTS edgemcp_scripts CASCADE`) })

	caddyfile := fmt.Sprintf(`SITE {
	mcp /mcp {
		scripts_dir %[1]s
		connector main postgres %[2]s {
			read_only
		}
		tool types-plain {
			description "Every type, no scripts"
			use main
			statement <<SQL
				SELECT %[3]s
				SQL
		}
		tool types-mapped {
			description "Every type through identity mappers"
			use main
			statement <<SQL
				SELECT %[3]s
				SQL
			mappers {
				input %[1]s/same/in.js
				output %[1]s/same/out.js
			}
		}
		tool user {
			description "A user by id, mappers discovered in scripts_dir"
			use main
			statement "SELECT name, email FROM edgemcp_scripts.users WHERE id = {{ inputs.user_id }}"
			input user_id int required
		}
		tool pixel {
			description "An image"
			input size int default 1
		}
		tool greet {
			description "Greets"
			input name string default "world"
		}
		tool fail {
			description "Fails as asked"
			script_timeout 500ms
			script_max_memory 1MiB
			input mode string required
		}
		tool chatty {
			description "Says too much"
			handler %[1]s/greet/handler.ts
			script_max_output 32
			input name string default "a very long name indeed"
		}
		tool fail-after {
			description "Its output mapper throws"
			use main
			statement "SELECT 1 AS one"
		}
	}
}`, dir, postgresURL(t), strings.Join(cols, ", "))
	g := startGateway(t, caddyfile)
	s := g.rawSession(t, "2025-06-18")

	t.Run("payload types cross exactly", func(t *testing.T) {
		plain := s.call(t, "types-plain", map[string]any{}).tool(t).rows(t)
		mapped := s.call(t, "types-mapped", map[string]any{}).tool(t).rows(t)
		if len(plain) != 1 || len(plain[0]) != len(pgTypeExprs) {
			t.Fatalf("plain: %v", plain)
		}
		for i, e := range pgTypeExprs {
			k := fmt.Sprintf("c%02d", i)
			if a, b := sameNumbers(plain[0][k]), sameNumbers(mapped[0][k]); !reflect.DeepEqual(a, b) {
				t.Errorf("%s: plain %#v, through scripts %#v", e, plain[0][k], mapped[0][k])
			}
		}
	})

	t.Run("mappers around a DB tool", func(t *testing.T) {
		res := s.call(t, "user", map[string]any{"id": 1}).tool(t)
		if got := res.rows(t); !reflect.DeepEqual(got, []map[string]any{{"label": "Ada <ada@example.com>", "tool": "user", "auth": nil}}) {
			t.Errorf("got %v", got)
		}
		if got := string(res.StructuredContent["results"]); got != res.Content[0].Text {
			t.Errorf("structuredContent %s", got)
		}
	})

	t.Run("handler returns an image block", func(t *testing.T) {
		c := g.mcpClient(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req := mcp.CallToolRequest{}
		req.Params.Name = "pixel"
		req.Params.Arguments = map[string]any{"size": 3}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		img, ok := res.Content[0].(mcp.ImageContent)
		if !ok || img.MIMEType != "image/png" || img.Data != "iVBORw0KGgoAAAANSUhEUg==" || res.IsError {
			t.Fatalf("got %#v", res.Content)
		}
		if txt, ok := res.Content[1].(mcp.TextContent); !ok || txt.Text != "size 3" {
			t.Fatalf("got %#v", res.Content[1])
		}
	})

	t.Run("handler plain value and defaults", func(t *testing.T) {
		res := s.call(t, "greet", map[string]any{}).tool(t)
		if got := res.Content[0].Text; got != `{"greeting":"Hello, world!","big":9007199254740993}` {
			t.Errorf("got %s", got)
		}
	})

	t.Run("errors name the stage", func(t *testing.T) {
		cases := []struct {
			tool string
			args map[string]any
			want string
		}{
			{"user", map[string]any{"id": 13}, "input transform: user 13 is private"},
			{"user", map[string]any{"id": 14}, "input transform: input mapper must return an object, got"},
			{"user", map[string]any{"id": 15}, "input validation: "},
			{"user", map[string]any{"id": 2}, "output transform: no such user"},
			{"fail", map[string]any{"mode": "throw"}, "handler: kaput: throw"},
			{"fail", map[string]any{}, "input validation: "},
			{"fail", map[string]any{"mode": "spin"}, "handler: timed out after 500ms (script_timeout)"},
			{"fail", map[string]any{"mode": "regex"}, "handler: timed out after 500ms (script_timeout)"},
			{"fail", map[string]any{"mode": "repeat"}, "handler: RangeError: String.prototype.repeat: this call would allocate more than 1 MiB (script_max_memory)"},
			{"fail-after", map[string]any{}, "output transform: TypeError: cannot shape"},
			{"chatty", map[string]any{}, "handler: the script's result is larger than 32 bytes (script output limit)"},
		}
		for _, c := range cases {
			r := s.call(t, c.tool, c.args)
			if r.Error == nil || r.Error.Code != -32000 || !strings.HasPrefix(r.Error.Message, c.want) {
				t.Errorf("%s %v: got %+v, want -32000 %q", c.tool, c.args, r.Error, c.want)
			}
			if r.Error != nil && strings.Contains(r.Error.Message, ".js:") {
				t.Errorf("a stack trace reached the client: %s", r.Error.Message)
			}
		}
		// The pool keeps serving after the timeout.
		if got := s.call(t, "greet", map[string]any{"name": "Ada"}).tool(t).Content[0].Text; !strings.Contains(got, "Hello, Ada!") {
			t.Errorf("after errors: %s", got)
		}
	})

	t.Run("error_mode result", func(t *testing.T) {
		if err := g.load(strings.Replace(caddyfile, "scripts_dir", "error_mode result\n\t\tscripts_dir", 1)); err != nil {
			t.Fatal(err)
		}
		http.DefaultClient.CloseIdleConnections() // the old server's
		s := g.rawSession(t, "2025-06-18")
		res := s.call(t, "fail", map[string]any{"mode": "x"}).tool(t)
		if !res.IsError || res.Content[0].Text != "handler: kaput: x" {
			t.Errorf("got %+v", res)
		}
	})

	t.Run("broken scripts fail the load", func(t *testing.T) {
		writeFile(t, filepath.Join(dir, "greet/handler.ts"), "export default function (\n  { return 1 }\n")
		err := g.load(caddyfile)
		if err == nil || !strings.Contains(err.Error(), `tool "greet": handler: `+filepath.Join(dir, "greet/handler.ts")+`:2:`) {
			t.Errorf("got %v", err)
		}
		writeFile(t, filepath.Join(dir, "greet/handler.ts"), "export const greet = () => 1\n")
		err = g.load(caddyfile)
		if err == nil || !strings.Contains(err.Error(), `no export "default" (it exports: greet)`) {
			t.Errorf("got %v", err)
		}
		writeFile(t, filepath.Join(dir, "greet/handler.ts"), "export default () => 1\n")
		writeFile(t, filepath.Join(dir, "fail-after/handler.js"), "export default () => 1\n")
		err = g.load(caddyfile)
		if err == nil || !strings.Contains(err.Error(), `tool "fail-after": runs a statement ('use main') but scripts_dir also has `) {
			t.Errorf("got %v", err)
		}
		if err := os.Remove(filepath.Join(dir, "fail-after/handler.js")); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, "greet/handler.ts")); err != nil {
			t.Fatal(err)
		}
		err = g.load(caddyfile)
		if err == nil || !strings.Contains(err.Error(), `tool "greet": missing 'use <connector>' + 'statement', or 'handler <file>' (and no `) {
			t.Errorf("got %v", err)
		}
	})
}

// sameNumbers makes numbers comparable by value: 1.50 and 1.5 are the same
// number, and the mapper may write either.
func sameNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			return string(x)
		}
		return "n:" + r.RatString()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = sameNumbers(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = sameNumbers(e)
		}
		return out
	}
	return v
}
