package cmdtemplate

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

func TestRenderIdentity(t *testing.T) {
	id := &sqltemplate.Identity{Subject: "alice", Claims: map[string]any{
		"tenant": "acme\r\nFLUSHALL", "level": float64(3), "org": map[string]any{"id": "o1"},
	}}
	for _, tc := range []struct {
		name string
		src  string
		id   *sqltemplate.Identity
		want []string
		miss string
	}{
		{"inside one argument", "HGET tenant:{{ auth.claims.tenant }} {{ inputs.f }}", id,
			[]string{"HGET", "tenant:acme\r\nFLUSHALL", "f1"}, ""},
		{"subject, number and nested claim", "HMGET u:{{ auth.subject }} {{ auth.claims.level }} {{ auth.claims.org.id }}", id,
			[]string{"HMGET", "u:alice", "3", "o1"}, ""},
		{"default", "GET r:{{ auth.claims.region | default 'eu' }}", id, []string{"GET", "r:eu"}, ""},
		{"missing claim", "GET r:{{ auth.claims.region }}", id, nil, "auth.claims.region"},
		{"no identity", "GET u:{{ auth.subject }}", nil, nil, "auth.subject"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := compile(t, tc.src, "f")
			got, err := c.RenderAs(map[string]any{"f": "f1", "auth.subject": "mallory", "auth.claims.region": "evil"}, tc.id)
			if tc.miss != "" {
				var me *sqltemplate.MissingIdentityError
				if !errors.As(err, &me) || me.Name != tc.miss {
					t.Fatalf("err = %v, want missing %s", err, tc.miss)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestIdentityCompile(t *testing.T) {
	c := compile(t, "HGET {{ auth.claims.t }}:{{ auth.subject }} x", "f")
	if got := c.IdentityValues(); !reflect.DeepEqual(got, []string{"auth.claims.t", "auth.subject"}) {
		t.Fatalf("IdentityValues = %v", got)
	}
	for src, want := range map[string]string{
		"{{ auth.subject }} x":                                    "command name must be literal",
		"EVAL {{ auth.claims.code }} 0":                           "must be literal",
		"GET {{ auth.claims.a | ident }}":                         "cannot be an identifier",
		"GET {{ auth.claims.a | default 1 }} {{ auth.claims.a }}": "different defaults",
	} {
		_, err := Compile(src, Options{LookupEnv: env})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile(%q) = %v, want %q", src, err, want)
		}
	}
}
