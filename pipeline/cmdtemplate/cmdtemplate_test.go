package cmdtemplate

import (
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"
)

func env(name string) (string, bool) {
	switch name {
	case "PREFIX":
		return "app one:", true
	}
	return "", false
}

func compile(t *testing.T, src string, inputs ...string) *Command {
	t.Helper()
	in := map[string]bool{}
	for _, n := range inputs {
		in[n] = true
	}
	c, err := Compile(src, Options{Inputs: in, LookupEnv: env})
	if err != nil {
		t.Fatalf("Compile(%q): %v", src, err)
	}
	return c
}

func TestRender(t *testing.T) {
	at := time.Date(2024, 5, 1, 14, 0, 0, 0, time.FixedZone("+02", 7200))
	for _, tc := range []struct {
		name   string
		src    string
		inputs map[string]any
		want   []string
	}{
		{"whole argument", "HGETALL {{ inputs.id }}", map[string]any{"id": "42"}, []string{"HGETALL", "42"}},
		{"inside an argument", "HGETALL user:{{inputs.id}}:profile", map[string]any{"id": int64(7)}, []string{"HGETALL", "user:7:profile"}},
		{"several", "ZRANGE {{ inputs.board }} 0 {{ inputs.n }} WITHSCORES", map[string]any{"board": "b", "n": int64(9)},
			[]string{"ZRANGE", "b", "0", "9", "WITHSCORES"}},
		{"value with spaces, quotes, newlines stays one argument", "SET k {{ inputs.v }}",
			map[string]any{"v": "a b \"c\" 'd'\r\nSET x y\r\n"}, []string{"SET", "k", "a b \"c\" 'd'\r\nSET x y\r\n"}},
		{"placeholder syntax in a value is text", "GET {{ inputs.v }}", map[string]any{"v": "{{ env.PREFIX }}"}, []string{"GET", "{{ env.PREFIX }}"}},
		{"double quotes and escapes", `SET "my key" "a\"b\\c\n\x41"`, nil, []string{"SET", "my key", "a\"b\\c\nA"}},
		{"single quotes", `SET 'it\'s' 'a "b" \n'`, nil, []string{"SET", "it's", `a "b" \n`}},
		{"empty quoted argument", `SET k ""`, nil, []string{"SET", "k", ""}},
		{"input inside quotes", `SET "k {{ inputs.v }}" 1`, map[string]any{"v": "x y"}, []string{"SET", "k x y", "1"}},
		{"env with spaces stays in its argument", "GET {{ env.PREFIX }}{{ inputs.id }}", map[string]any{"id": "1"}, []string{"GET", "app one:1"}},
		{"float, bool, time, big int, array, object", "X {{ inputs.f }} {{ inputs.b }} {{ inputs.t }} {{ inputs.i }} {{ inputs.a }} {{ inputs.o }}",
			map[string]any{"f": 1.5, "b": true, "t": at, "i": new(big.Int).Lsh(big.NewInt(1), 70), "a": []int64{1, 2}, "o": map[string]any{"k": "v"}},
			[]string{"X", "1.5", "1", "2024-05-01T12:00:00Z", "1180591620717411303424", "[1,2]", `{"k":"v"}`}},
		{"multi-line statement", "HSET h\n  f1 {{ inputs.a }}\n  f2 v2", map[string]any{"a": "1"}, []string{"HSET", "h", "f1", "1", "f2", "v2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var names []string
			for n := range tc.inputs {
				names = append(names, n)
			}
			c := compile(t, tc.src, names...)
			got, err := c.Render(tc.inputs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"", "empty command"},
		{"   ", "empty command"},
		{"{{ inputs.cmd }} k", "command name must be literal"},
		{"GET{{ inputs.cmd }} k", "command name must be literal"},
		{"EVAL {{ inputs.script }} 0", "script or function of EVAL must be literal"},
		{"fcall_ro {{ inputs.f }} 0", "script or function of FCALL_RO must be literal"},
		{"SCRIPT LOAD {{ inputs.script }}", "code of SCRIPT LOAD must be literal"},
		{"script load return{{ inputs.script }}", "code of SCRIPT LOAD must be literal"},
		{"FUNCTION LOAD {{ inputs.script }}", "code of FUNCTION LOAD must be literal"},
		{"FUNCTION LOAD REPLACE {{ inputs.script }}", "code of FUNCTION LOAD must be literal"},
		{"function restore {{ inputs.script }}", "code of FUNCTION RESTORE must be literal"},
		{"SCRIPT {{ inputs.cmd }} x", "subcommand of SCRIPT must be literal"},
		{"FUNCTION {{ inputs.cmd }} x", "subcommand of FUNCTION must be literal"},
		{"GET {{ inputs.nope }}", `no input named "nope"`},
		{"GET {{ env.MISSING }}", "MISSING is not set"},
		{"GET {{ inputs.id | ident }}", "| ident"},
		{"GET {{ input.id }}", "unknown namespace"},
		{`GET "abc`, "line 1, column 5: unterminated quoted argument"},
		{"GET\n'abc", "line 2, column 1: unterminated quoted argument"},
		{`GET "a"b`, "closing quote must be followed by a space"},
		{`GET "\q"`, "unknown escape"},
	} {
		t.Run(tc.src, func(t *testing.T) {
			_, err := Compile(tc.src, Options{Inputs: map[string]bool{"id": true, "cmd": true, "script": true, "f": true}, LookupEnv: env})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestRenderMissingValue(t *testing.T) {
	c := compile(t, "GET {{ inputs.id }}", "id")
	if _, err := c.Render(map[string]any{}); err == nil || !strings.Contains(err.Error(), `input "id": no value`) {
		t.Errorf("error %v", err)
	}
}

// FuzzRender: whatever the values, the argument count is the template's
// and each value appears whole inside its own argument.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"", " ", "a b", "\"", "'", "\r\n*1\r\n$4\r\nPING\r\n", "{{ inputs.a }}", "\\x41"} {
		f.Add(s, s)
	}
	c, err := Compile(`HSET "h {{ inputs.a }}" f:{{ inputs.b }}:g {{ inputs.a }}`, Options{Inputs: map[string]bool{"a": true, "b": true}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		got, err := c.Render(map[string]any{"a": a, "b": b})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"HSET", "h " + a, "f:" + b + ":g", a}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

// TestText: the telemetry form names the command and hides every argument,
// literal or not ({{ env.X }} may have put a secret in a literal).
func TestText(t *testing.T) {
	c, err := Compile(`HGET "user:{{ inputs.id }}" {{ env.FIELD }}`, Options{
		Inputs:    map[string]bool{"id": true},
		LookupEnv: func(string) (string, bool) { return "s3cret", true },
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Text(); got != "HGET ? ?" {
		t.Errorf("Text() = %q", got)
	}
}
