// Package archtest holds the dependency rule of the repository as a test:
// caddymodule -> pipeline <- connectors, sources, stores (docs/architecture.md,
// "Layout and the dependency rule"). It reads what `go list` says each package
// depends on, transitively, so an import that breaks the rule through a third
// package is caught as well as a direct one.
package archtest

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const module = "github.com/edgemcp/edgemcp"

// rule: a package under from (itself or below) may not depend on a package
// under any of the denied prefixes. why is printed with a violation.
type rule struct {
	from   string
	denied []string
	why    string
}

var rules = []rule{
	{
		from:   "pipeline",
		denied: []string{"github.com/caddyserver/caddy", "caddymodule", "connectors", "sources", "stores"},
		why:    "pipeline is the Caddy-free core; everything else points at it",
	},
	{
		from:   "connectors",
		denied: []string{"caddymodule", "sources", "stores"},
		why:    "a connector is a guest module: it knows pipeline and its driver",
	},
	{
		from:   "sources",
		denied: []string{"caddymodule", "connectors", "stores"},
		why:    "a source is a guest module: it knows pipeline and its upstream",
	},
	{
		from:   "stores",
		denied: []string{"caddymodule", "connectors", "sources"},
		why:    "a store is a guest module: it knows pipeline and its client",
	},
	{
		from:   "caddymodule",
		denied: []string{"connectors", "sources", "stores"},
		why:    "the shell reaches guests through Caddy's module registry and pipeline's interfaces, never by name",
	},
}

// deps maps each package of the module to the packages it depends on,
// transitively, test files left out (go list's Deps).
func deps(t *testing.T) map[string][]string {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(self), "..", "..")
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	m := make(map[string][]string)
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 {
			m[f[0]] = f[1:]
		}
	}
	if len(m) == 0 {
		t.Fatal("go list listed no packages")
	}
	return m
}

// under reports whether pkg is prefix (a path of this module, or a whole
// import path) or a package below it.
func under(pkg, prefix string) bool {
	if !strings.Contains(prefix, ".") {
		prefix = module + "/" + prefix
	}
	return pkg == prefix || strings.HasPrefix(pkg, prefix+"/")
}

func TestDependencyRule(t *testing.T) {
	all := deps(t)
	for _, r := range rules {
		for pkg, ds := range all {
			if !under(pkg, r.from) {
				continue
			}
			for _, d := range ds {
				for _, deny := range r.denied {
					if under(d, deny) {
						t.Errorf("%s depends on %s: %s", strings.TrimPrefix(pkg, module+"/"), d, r.why)
					}
				}
			}
		}
	}
}

// TestShellPackagesDoNotPointUp: a sub-package of caddymodule is a component
// the shell wires; it never depends on the shell itself.
func TestShellPackagesDoNotPointUp(t *testing.T) {
	shell := module + "/caddymodule"
	for pkg, ds := range deps(t) {
		if !under(pkg, "caddymodule") || pkg == shell {
			continue
		}
		for _, d := range ds {
			if d == shell {
				t.Errorf("%s depends on the shell %s: pass it what it needs instead", strings.TrimPrefix(pkg, module+"/"), shell)
			}
		}
	}
}

// TestTestServicesStayInTests: internal/testservices starts databases and
// upstreams for tests; no shipped package may link it. The load driver
// (bench) and the test-helper packages (named *test) are for tests too.
func TestTestServicesStayInTests(t *testing.T) {
	for pkg, ds := range deps(t) {
		if under(pkg, "internal/testservices") || under(pkg, "bench") || strings.HasSuffix(pkg, "test") {
			continue
		}
		for _, d := range ds {
			if under(d, "internal/testservices") {
				t.Errorf("%s depends on %s, which is for tests only", strings.TrimPrefix(pkg, module+"/"), d)
			}
		}
	}
}
