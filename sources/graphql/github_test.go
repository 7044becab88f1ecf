package graphql

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// githubSchema is the path of a file of GitHub's GraphQL schema as the npm
// package @octokit/graphql-schema ships it (tests/node/package.json pins
// the version): schema.graphql (SDL) or schema.json (introspection).
// EDGEMCP_NODE_DIR names the Node packages' directory (scripts/test.sh
// sets it); else tests/node of this checkout.
func githubSchema(t testing.TB, file string) string {
	t.Helper()
	dir := os.Getenv("EDGEMCP_NODE_DIR")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "..", "tests", "node"))
	}
	p := filepath.Join(dir, "node_modules", "@octokit", "graphql-schema", file)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("GitHub's GraphQL schema is missing (%v): run `npm ci` in %s (scripts/test.sh does; tests/node/package.json lists @octokit/graphql-schema)", err, dir)
	}
	return p
}

// TestGitHubSchema: GitHub's published schema.graphql, which defines two
// fields twice alike, loads with a warning for each; its introspection
// answer (schema.json) loads as it is.
// Every field tool's operation (all its arguments declared, the selection
// generated at depth 1, 2 and 3) validates against the schema, unions
// whose members disagree on a field's type included.
func TestGitHubSchema(t *testing.T) {
	fromSDL, warnings, err := LoadSDL(githubSchema(t, "schema.graphql"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) == 0 || !strings.Contains(warnings[0], "schema.graphql:") || !strings.Contains(warnings[0], "field EnterpriseOwnerInfo.repositoryDeployKeySetting is defined again, alike") {
		t.Errorf("warnings: %q", warnings)
	}
	raw, err := os.ReadFile(githubSchema(t, "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	sdl, err := sdlFromIntrospection(raw)
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := parseSchema("schema.json", sdl)
	if err != nil {
		t.Fatal(err)
	}
	// The package's two files are generated apart and differ a little
	// (the SDL file has a few more fields): each is checked on its own.
	for _, tc := range []struct {
		name string
		s    *ast.Schema
	}{{"schema.graphql", fromSDL}, {"schema.json", fromJSON}} {
		tools := toolsByName(t, tc.s, Config{Namespace: "gh", Mutations: true, Executor: &Executor{}})
		if len(tools) < 250 {
			t.Errorf("%s: %d tools", tc.name, len(tools))
		}
		checkEveryOperation(t, tc.name, tc.s)
	}
}

// checkEveryOperation validates the operation of every field tool of s,
// with all its arguments declared, at depths 1 to 3.
func checkEveryOperation(t *testing.T, name string, s *ast.Schema) {
	t.Helper()
	limits := Limits{}.withDefaults()
	for _, depth := range []int{1, 2, 3} {
		checked, invalid := 0, 0
		for _, root := range []*ast.Definition{s.Query, s.Mutation} {
			kind := ast.Query
			if root == s.Mutation {
				kind = ast.Mutation
			}
			for _, f := range root.Fields {
				if strings.HasPrefix(f.Name, "__") {
					continue
				}
				rf := &rootField{kind: kind, field: f, selection: Selection(s, f.Type, depth, limits)}
				all := map[string]any{}
				for _, arg := range f.Arguments {
					all[arg.Name] = nil
				}
				text := rf.operation(all, true)
				doc, err := parser.ParseQuery(&ast.Source{Input: text})
				if err != nil {
					t.Fatalf("%s: %v", f.Name, err)
				}
				checked++
				if errs := validator.Validate(s, doc); len(errs) > 0 {
					invalid++
					t.Errorf("%s, depth %d, %s field %s: %s", name, depth, kind, f.Name, listMessage(errs))
				} else if err := limits.Check(doc, doc.Operations[0]); err != nil {
					invalid++
					t.Errorf("%s, depth %d, %s field %s: %v", name, depth, kind, f.Name, err)
				}
			}
		}
		t.Logf("%s, depth %d: %d field tools, %d operations invalid", name, depth, checked, invalid)
	}
}
