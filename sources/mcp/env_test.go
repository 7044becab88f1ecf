//go:build unix

package mcp

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStdioChildEnvironment: a stdio child gets what programs need from
// the gateway's environment (PATH, HOME, the locale), what inherit_env
// names (a name, or a prefix*) and what env sets, which wins; nothing
// else: a secret in the gateway's environment (a database URL, a token)
// does not reach it. It did: the child had the whole environment.
func TestStdioChildEnvironment(t *testing.T) {
	t.Setenv("EDGEMCP_TEST_DATABASE_URL", "postgres://app:s3cret@db/app")
	t.Setenv("EDGEMCP_TEST_TOKEN", "tok-s3cret")
	t.Setenv("EDGEMCP_PROXY_URL", "http://proxy:3128")
	t.Setenv("NPM_CONFIG_REGISTRY", "http://registry.local")
	t.Setenv("NPM_CONFIG_CACHE", "/var/cache/npm")
	t.Setenv("LC_TIME", "C.UTF-8")
	t.Setenv("HOME", "/home/gateway")
	s, _ := stdioSource(t, time.Hour)
	s.InheritEnv = []string{"EDGEMCP_PROXY_URL", "NPM_CONFIG_*"}
	s.Env["HOME"] = "/srv/child"
	provision(t, s)
	tools, _ := s.Tools("c")
	res, err := call(t, tools, "c_env", nil)
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Split(text(t, res), "\n")
	for _, want := range []string{"EDGEMCP_PROXY_URL=http://proxy:3128", "NPM_CONFIG_REGISTRY=http://registry.local",
		"NPM_CONFIG_CACHE=/var/cache/npm", "LC_TIME=C.UTF-8", "HOME=/srv/child", "EDGEMCP_MCP_TEST_SERVER=1"} {
		if !slices.Contains(env, want) {
			t.Errorf("the child lacks %s", want)
		}
	}
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }) {
		t.Error("the child has no PATH")
	}
	for _, kv := range env {
		if strings.Contains(kv, "s3cret") || kv == "HOME=/home/gateway" {
			t.Errorf("the child got %s", kv)
		}
	}
}

// TestChildEnvNames: what passes, and what an inherit_env entry may be.
func TestChildEnvNames(t *testing.T) {
	parent := []string{"PATH=/bin", "LC_ALL=C", "LCX=no", "AWS_SECRET_ACCESS_KEY=no", "HTTPS_PROXY=p", "=C:=C:\\"}
	got := childEnv(parent, []string{"HTTPS_PROXY"}, []string{"PATH=/opt/bin"})
	if want := []string{"LC_ALL=C", "HTTPS_PROXY=p", "PATH=/opt/bin"}; !slices.Equal(got, want) {
		t.Errorf("childEnv: %q, want %q", got, want)
	}
	for _, bad := range []string{"", "*", "A=B", "A*B", "**"} {
		if checkEnvName(bad) == nil {
			t.Errorf("inherit_env %q accepted", bad)
		}
	}
	for _, good := range []string{"HTTPS_PROXY", "npm_config_*"} {
		if err := checkEnvName(good); err != nil {
			t.Errorf("inherit_env %q: %v", good, err)
		}
	}
}
