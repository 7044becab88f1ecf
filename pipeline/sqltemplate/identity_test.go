package sqltemplate

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

var testIdentity = &Identity{
	Subject: "alice",
	Claims: map[string]any{
		"tenant": "acme'; DROP TABLE t; --",
		"level":  float64(3),
		"ratio":  1.5,
		"groups": []any{"a", "b"},
		"org":    map[string]any{"id": float64(42), "name": "Acme"},
		"none":   nil,
	},
}

func TestRenderIdentity(t *testing.T) {
	tests := []struct {
		name string
		d    Dialect
		src  string
		id   *Identity
		sql  string
		args []any
		miss string // the *MissingIdentityError's name, when one is expected
	}{
		{"pg subject and claim reuse", Postgres,
			"SELECT * FROM t WHERE owner = {{ auth.subject }} AND tenant = {{auth.claims.tenant}} AND a = {{ inputs.a }} OR t2 = {{ auth.claims.tenant }}",
			testIdentity, "SELECT * FROM t WHERE owner = $1 AND tenant = $2 AND a = $3 OR t2 = $2",
			[]any{"alice", "acme'; DROP TABLE t; --", "x"}, ""},
		{"mysql repeats", MySQL,
			"SELECT * FROM t WHERE tenant = {{ auth.claims.tenant }} OR tenant = {{ auth.claims.tenant }}",
			testIdentity, "SELECT * FROM t WHERE tenant = ? OR tenant = ?",
			[]any{"acme'; DROP TABLE t; --", "acme'; DROP TABLE t; --"}, ""},
		{"types kept", SQLite,
			"SELECT {{ auth.claims.level }}, {{ auth.claims.ratio }}, {{ auth.claims.groups }}, {{ auth.claims.org.id }}, {{ auth.claims.org }}",
			testIdentity, "SELECT ?, ?, ?, ?, ?",
			[]any{int64(3), 1.5, []any{"a", "b"}, int64(42), map[string]any{"id": float64(42), "name": "Acme"}}, ""},
		{"missing claim", Postgres, "SELECT {{ auth.claims.region }}", testIdentity, "", nil, "auth.claims.region"},
		{"null claim is missing", Postgres, "SELECT {{ auth.claims.none }}", testIdentity, "", nil, "auth.claims.none"},
		{"path through a non-object", Postgres, "SELECT {{ auth.claims.tenant.id }}", testIdentity, "", nil, "auth.claims.tenant.id"},
		{"no identity", Postgres, "SELECT {{ auth.subject }}", nil, "", nil, "auth.subject"},
		{"empty subject", Postgres, "SELECT {{ auth.subject }}", &Identity{}, "", nil, "auth.subject"},
		{"default string", Postgres, "SELECT {{ auth.claims.region | default 'eu' }}", testIdentity, "SELECT $1", []any{"eu"}, ""},
		{"default quote doubled", Postgres, "SELECT {{ auth.claims.region | default 'o''brien' }}", nil, "SELECT $1", []any{"o'brien"}, ""},
		{"default json string", Postgres, `SELECT {{ auth.claims.region|default "a b" }}`, nil, "SELECT $1", []any{"a b"}, ""},
		{"default number", Postgres, "SELECT {{ auth.claims.region | default 7 }}, {{ auth.claims.x | default 0.5 }}", nil, "SELECT $1, $2", []any{int64(7), 0.5}, ""},
		{"default null", Postgres, "SELECT {{ auth.claims.region | default null }}", nil, "SELECT $1", []any{nil}, ""},
		{"default unused when present", Postgres, "SELECT {{ auth.claims.tenant | default 'x' }}", &Identity{Claims: map[string]any{"tenant": "t1"}}, "SELECT $1", []any{"t1"}, ""},
		{"inputs named like claims stay inputs", Postgres, "SELECT {{ inputs.a }}, {{ auth.claims.a }}",
			&Identity{Claims: map[string]any{"a": "claim"}}, "SELECT $1, $2", []any{"x", "claim"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := compileTest(tt.src, tt.d)
			if err != nil {
				t.Fatal(err)
			}
			checkTokens(t, st)
			// The caller's arguments never provide an identity value,
			// even under the slot's own name.
			values := map[string]any{"a": "x", "auth.subject": "mallory", "auth.claims.tenant": "evil", "auth.claims.region": "evil"}
			sql, args, err := st.RenderAs(values, tt.id)
			if tt.miss != "" {
				var me *MissingIdentityError
				if !errors.As(err, &me) || me.Name != tt.miss {
					t.Fatalf("err = %v, want missing %s", err, tt.miss)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sql != tt.sql || !reflect.DeepEqual(args, tt.args) {
				t.Fatalf("got %q %#v, want %q %#v", sql, args, tt.sql, tt.args)
			}
		})
	}
}

func TestIdentityValues(t *testing.T) {
	st, err := compileTest("SELECT {{ auth.claims.org.id }}, {{ auth.subject }}, {{ inputs.a }}, {{ auth.subject }}", Postgres)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.IdentityValues(); !reflect.DeepEqual(got, []string{"auth.claims.org.id", "auth.subject"}) {
		t.Fatalf("IdentityValues = %v", got)
	}
	st, _ = compileTest("SELECT {{ inputs.a }}", Postgres)
	if got := st.IdentityValues(); got != nil {
		t.Fatalf("IdentityValues = %v, want nil", got)
	}
}

func TestIdentityCompileErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"SELECT * FROM t ORDER BY {{ auth.claims.col }}", "identity value auth.claims.col is in identifier position"},
		{"SELECT * FROM {{ auth.subject }}", "identity value auth.subject is in identifier position"},
		{"SELECT {{ auth.claims.col | ident }}", "an identity value cannot be an identifier"},
		{"SELECT '{{ auth.subject }}'", "identity value auth.subject inside a string literal"},
		{"SELECT 1 -- {{ auth.subject }}", "identity value auth.subject inside a comment"},
		{"SELECT x{{ auth.subject }}", "identity value auth.subject is glued to the word before it"},
		{"SELECT {{ auth.user }}", `unknown identity value "auth.user"`},
		{"SELECT {{ auth.claims. }}", "invalid claim name"},
		{"SELECT {{ auth.claims.a..b }}", "invalid claim name"},
		{"SELECT {{ auth.claims.a-b }}", "invalid claim name"},
		{"SELECT {{ auth.claims.a | upper }}", `unknown filter "upper"`},
		{"SELECT {{ auth.claims.a | default }}", `missing value after "default"`},
		{"SELECT {{ auth.claims.a | default x y }}", "bad default value"},
		{"SELECT {{ auth.claims.a | default [1] }}", "bad default value"},
		{"SELECT {{ auth.claims.a | default 'x }}", "bad default value"},
		{"SELECT {{ auth.claims.a extra }}", `unexpected "extra"`},
		{"SELECT {{ auth.claims.a | default 1 }}, {{ auth.claims.a }}", "different defaults"},
		{"SELECT {{ inputs.a | default 1 }}", `filter "default" applies to identity values`},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			_, err := compileTest(tt.src, Postgres)
			var ce *CompileError
			if !errors.As(err, &ce) || !strings.Contains(ce.Msg, tt.want) {
				t.Fatalf("err = %v, want a CompileError containing %q", err, tt.want)
			}
		})
	}
}
