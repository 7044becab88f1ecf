package script

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// files writes name → content under a fresh directory and returns it.
func files(t testing.TB, m map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range m {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func mustLoad(t testing.TB, spec string, opts Options) *Script {
	t.Helper()
	s, err := Load(spec, opts)
	if err != nil {
		t.Fatalf("load %s: %v", spec, err)
	}
	return s
}

func call(t testing.TB, s *Script, arg any) string {
	t.Helper()
	out, err := s.Call(context.Background(), arg)
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	return string(out)
}

func TestModuleForms(t *testing.T) {
	dir := files(t, map[string]string{
		"fn.js":                           `export default function ({inputs}) { return {sum: inputs.a + inputs.b} }`,
		"async.js":                        `export default async function ({inputs}) { await null; return {sum: inputs.a + inputs.b} }`,
		"arrow.js":                        `export default ({inputs}) => ({sum: inputs.a + inputs.b})`,
		"named.js":                        `export function add({inputs}) { return {sum: inputs.a + inputs.b} }; export default () => 0`,
		"ts.ts":                           "interface In { a: number; b: number }\n" + `export default function ({inputs}: {inputs: In}): {sum: number} { return {sum: inputs.a + inputs.b} }`,
		"cjs.js":                          `module.exports = function ({inputs}) { return {sum: inputs.a + inputs.b} }`,
		"lib/fmt.js":                      `export const add = (a, b) => a + b`,
		"import.js":                       `import { add } from './lib/fmt.js'; export default ({inputs}) => ({sum: add(inputs.a, inputs.b)})`,
		"node_modules/adder/package.json": `{"name":"adder","main":"index.js"}`,
		"node_modules/adder/index.js":     `exports.add = function (a, b) { return a + b }`,
		"pkg.js":                          `import { add } from 'adder'; export default ({inputs}) => ({sum: add(inputs.a, inputs.b)})`,
	})
	for _, spec := range []string{"fn.js", "async.js", "arrow.js", "named.js#add", "ts.ts", "cjs.js", "import.js", "pkg.js"} {
		t.Run(spec, func(t *testing.T) {
			s := mustLoad(t, filepath.Join(dir, spec), Options{})
			if got := call(t, s, map[string]any{"inputs": map[string]any{"a": 2, "b": 3}}); got != `{"sum":5}` {
				t.Errorf("got %s", got)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := files(t, map[string]string{
		"syntax.js":   "export default function () {\n  return 1 +;\n}\n",
		"syntax.ts":   "const x: number = 1\nexport default function (a: number { return a }\n",
		"noexport.js": "export function one() {}\nexport const two = 2\n",
		"notfn.js":    "export const two = 2\nexport default 3\n",
		"throws.js":   "throw new Error('boom at load')\nexport default () => 1\n",
		"missing.js":  "import x from './nope.js'\nexport default () => x\n",
		"fs.js":       "import fs from 'fs'\nexport default () => fs\n",
		"spin.js":     "while (true) {}\nexport default () => 1\n",
	})
	cases := []struct{ spec, want string }{
		{"syntax.js", "syntax.js:2:13: Unexpected \";\""},
		{"syntax.ts", "syntax.ts:2:36: Expected \")\" but found \"{\""},
		{"noexport.js#three", `no export "three" (it exports: one, two)`},
		{"noexport.js", `no export "default" (it exports: one, two)`},
		{"notfn.js#two", `export "two" is not a function (it is a number)`},
		{"throws.js", "evaluating the module: boom at load"},
		{"missing.js", "missing.js:1:15: Could not resolve \"./nope.js\""},
		{"fs.js", "fs.js:1:16: Could not resolve \"fs\""},
		{"spin.js", "evaluating the module: timed out"},
		{"absent.js", "no such file"},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			_, err := Load(filepath.Join(dir, c.spec), Options{Timeout: 100 * time.Millisecond})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func scriptErr(t *testing.T, err error) *Error {
	t.Helper()
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("want *Error, got %T %v", err, err)
	}
	return se
}

func TestCallErrors(t *testing.T) {
	dir := files(t, map[string]string{
		"throw.js":   `export default () => { throw new Error('user 42 not found') }`,
		"type.js":    `export default (p) => p.missing.x`,
		"string.js":  `export default () => { throw 'plain' }`,
		"reject.js":  `export default async () => { throw new RangeError('nope') }`,
		"pending.js": `export default () => new Promise(() => {})`,
		"loop.js":    `export default () => { while (true) {} }`,
		"deep.js":    `function f(n) { return f(n + 1) + 1 }; export default () => f(0)`,
		"big.js":     `export default () => Array(100).fill('x'.repeat(1024 * 1024))`,
		"bigutf.js":  `export default () => ({a: 'é'.repeat(2 * 1024 * 1024), b: 'é'.repeat(600 * 1024)})`,
		"bigutf2.js": `export default () => 'é'.repeat(600 * 1024)`,
		"bigarr.js":  `export default () => { const a = []; for (let i = 0; i < 40000; i++) a.push({i, s: 'abcdefghijabcdefghij'}); return a }`,
		"alloc.js":   `export default () => { const a = []; while (true) a.push({n: a.length, s: 'x' + a.length}) }`,
		"cycle.js":   `export default () => { const a = {}; a.self = a; return a }`,
		"require.js": `const name = 'fs'; export default () => require(name)`,
		"timers.js":  `export default () => typeof setTimeout`,
		"undef.js":   `export default () => undefined`,
	})
	cases := []struct {
		spec string
		kind Kind
		want string
	}{
		{"throw.js", KindThrown, "user 42 not found"},
		{"type.js", KindThrown, "TypeError: Cannot read property 'x' of undefined"},
		{"string.js", KindThrown, "plain"},
		{"reject.js", KindThrown, "RangeError: nope"},
		{"pending.js", KindThrown, "never settled"},
		{"loop.js", KindTimeout, "timed out after 200ms (script_timeout)"},
		{"deep.js", KindStack, "maximum call stack depth exceeded (limit 1000 frames)"},
		{"big.js", KindTooLarge, "larger than 1 MiB (script output limit)"},
		{"bigutf.js", KindTooLarge, "larger than 1 MiB (script output limit)"},
		{"bigutf2.js", KindTooLarge, "larger than 1 MiB (script output limit)"},
		{"bigarr.js", KindTooLarge, "larger than 1 MiB (script output limit)"},
		{"alloc.js", KindTimeout, "timed out after 200ms"},
		{"cycle.js", KindBadValue, "nested deeper than 100 levels"},
		{"require.js", KindThrown, "no require at run time"},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			limit := 5 * time.Second // the machine may be busy
			if c.kind == KindTimeout {
				limit = 200 * time.Millisecond
			}
			s := mustLoad(t, filepath.Join(dir, c.spec), Options{Timeout: limit})
			_, err := s.Call(context.Background(), map[string]any{})
			se := scriptErr(t, err)
			if se.Kind != c.kind || !strings.Contains(se.Message, c.want) {
				t.Fatalf("got %s %q, want %s containing %q", se.Kind, se.Message, c.kind, c.want)
			}
			if strings.Contains(se.SafeMessage(), "at ") && c.kind == KindThrown && strings.Contains(se.SafeMessage(), ".js:") {
				t.Errorf("a stack trace reached the safe message: %q", se.SafeMessage())
			}
			// The pool keeps serving after any failure.
			_, _ = s.Call(context.Background(), map[string]any{})
		})
	}
	for spec, want := range map[string]string{"timers.js": `"undefined"`, "undef.js": `null`} {
		s := mustLoad(t, filepath.Join(dir, spec), Options{})
		if got := call(t, s, nil); got != want {
			t.Errorf("%s: got %s, want %s", spec, got, want)
		}
	}
}

func TestInputCap(t *testing.T) {
	dir := files(t, map[string]string{"id.js": `export default (p) => p.inputs.s.length`})
	s := mustLoad(t, filepath.Join(dir, "id.js"), Options{MaxInput: 1024})
	if got := call(t, s, map[string]any{"inputs": map[string]any{"s": strings.Repeat("a", 900)}}); got != "900" {
		t.Fatalf("got %s", got)
	}
	_, err := s.Call(context.Background(), map[string]any{"inputs": map[string]any{"s": strings.Repeat("a", 2000)}})
	if se := scriptErr(t, err); se.Kind != KindTooLarge || se.Message != "input to the script is larger than 1 KiB (script input limit)" {
		t.Fatalf("got %v", se)
	}
}

func TestGlobalsDoNotLeak(t *testing.T) {
	dir := files(t, map[string]string{
		"strict.js": `export default () => { const seen = globalThis.leak; try { globalThis.leak = 'secret' } catch (e) { return {seen: seen ?? null, err: e.name} } return {seen: seen ?? null} }`,
		"sloppy.js": `module.exports = function () { var seen = typeof leaked; leaked = 1; return seen }`,
		"shadow.js": `export default () => { const seen = typeof JSON.parse; try { JSON = null } catch (e) {} return seen }`,
	})
	for spec, want := range map[string]string{
		"strict.js": `{"seen":null,"err":"TypeError"}`,
		"sloppy.js": `"undefined"`,
		"shadow.js": `"function"`,
	} {
		s := mustLoad(t, filepath.Join(dir, spec), Options{MaxRuntimes: 1})
		for i := 0; i < 3; i++ {
			if got := call(t, s, nil); got != want {
				t.Errorf("%s call %d: got %s, want %s", spec, i, got, want)
			}
		}
	}
}

func TestValuesCrossExactly(t *testing.T) {
	dir := files(t, map[string]string{
		"id.js":    `export default (p) => p`,
		"types.js": `export default (p) => Object.fromEntries(Object.entries(p).map(([k, v]) => [k, typeof v]))`,
		"out.js": `export default () => ({
			z: 1, a: [1.5, -0, 1e21, 1e-7, NaN, Infinity], big: 123456789012345678901234567890n,
			when: new Date(Date.UTC(2024, 0, 2, 3, 4, 5)), skip: undefined, f() {}, s: "\u2028<>&\"\\\n",
			nested: {b: null, a: [undefined, () => 1]}, boxed: new String('x'), num: new Number(2),
		})`,
	})
	in := map[string]any{
		"int":     int64(42),
		"big":     int64(9007199254740993),
		"bignum":  json.Number("123456789012345678901234567890"),
		"numeric": json.Number("1234567890123456789012.5"),
		"dec":     json.Number("12.50"),
		"float":   3.25,
		"str":     "héllo",
		"null":    nil,
		"bool":    true,
		"when":    time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC),
		"bytes":   []byte{0, 1, 2},
		"json":    json.RawMessage(`{"b":1,"a":[true,null]}`),
		"list":    []any{int64(1), "two"},
	}
	got := call(t, mustLoad(t, filepath.Join(dir, "id.js"), Options{}), in)
	want := `{"big":9007199254740993,"bignum":123456789012345678901234567890,"bool":true,"bytes":"AAEC","dec":12.5,` +
		`"float":3.25,"int":42,"json":{"a":[true,null],"b":1},"list":[1,"two"],"null":null,` +
		`"numeric":"1234567890123456789012.5","str":"héllo","when":"2024-01-02T03:04:05.0000006Z"}`
	if got != want {
		t.Errorf("identity:\n got %s\nwant %s", got, want)
	}
	types := call(t, mustLoad(t, filepath.Join(dir, "types.js"), Options{}), in)
	if !strings.Contains(types, `"big":"bigint"`) || !strings.Contains(types, `"int":"number"`) || !strings.Contains(types, `"when":"string"`) || !strings.Contains(types, `"json":"object"`) {
		t.Errorf("types: %s", types)
	}
	out := call(t, mustLoad(t, filepath.Join(dir, "out.js"), Options{}), nil)
	wantOut := `{"z":1,"a":[1.5,0,1e+21,1e-7,null,null],"big":123456789012345678901234567890,"when":"2024-01-02T03:04:05.000Z",` +
		`"s":"\u2028<>&\"\\\n","nested":{"b":null,"a":[null,null]},"boxed":"x","num":2}`
	if out != wantOut {
		t.Errorf("output:\n got %s\nwant %s", out, wantOut)
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Errorf("output is not JSON: %v", err)
	}
}

func TestCallValueKeepsBigIntegers(t *testing.T) {
	dir := files(t, map[string]string{"id.js": `export default ({inputs}) => ({...inputs, extra: 1})`})
	v, err := mustLoad(t, filepath.Join(dir, "id.js"), Options{}).CallValue(context.Background(),
		map[string]any{"inputs": map[string]any{"id": json.Number("9007199254740993")}})
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	if m["id"] != json.Number("9007199254740993") || m["extra"] != json.Number("1") {
		t.Fatalf("got %#v", m)
	}
}

// Stack traces (debug logs only) point at the original files and lines,
// through the bundle's inline source map.
func TestStackTraceMapsToSource(t *testing.T) {
	dir := files(t, map[string]string{
		"lib.ts":  "type X = number\n\nexport function boom(): X {\n  throw new Error('deep')\n}\n",
		"main.ts": "import {boom} from './lib'\n\nexport default () => boom()\n",
	})
	_, err := mustLoad(t, filepath.Join(dir, "main.ts"), Options{}).Call(context.Background(), nil)
	se := scriptErr(t, err)
	if se.Message != "deep" || !strings.Contains(se.Stack, "lib.ts:4:") || !strings.Contains(se.Stack, "main.ts:3:") {
		t.Fatalf("message %q, stack:\n%s", se.Message, se.Stack)
	}
}
