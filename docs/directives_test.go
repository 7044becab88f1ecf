package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// caddyfilePkg is the import path of Caddy's Caddyfile package: a function
// that takes one of its types (a Dispenser, a Token, a Segment) reads the
// Caddyfile.
const caddyfilePkg = "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

// The Caddyfile reference (docs/caddyfile.md, and docs/sources.md for the
// sources' blocks) names every word the parser accepts: each directive,
// sub-directive and keyword argument appears in its code (a code block or
// a code span). The words come from the parser itself, wherever it lives:
// every non-test Go file of the repository is read, and in each function
// that takes a Caddyfile type, the string constants its `case` clauses
// and `==` comparisons test are collected. So a new directive fails this
// test until it is documented, whichever file parses it.
func TestReferenceNamesEveryDirective(t *testing.T) {
	words := parserWords(t, "..")
	// The collector must keep finding the parser: words from the mcp
	// block, a connector, a tool, an auth plugin's and a source's block.
	for _, w := range []string{"connector", "max_waiting", "statement", "jwks_url", "max_caller_sessions", "circuit_breaker", "prefix"} {
		if _, ok := words[w]; !ok {
			t.Fatalf("the parser's word %q was not collected: has the parser changed shape?", w)
		}
	}
	documented := map[string]bool{}
	for _, name := range []string{"caddyfile.md", "sources.md"} {
		f := readDoc(t, name)
		blocks, prose := fences(f)
		spans, _ := codeSpans(prose)
		for _, b := range blocks {
			spans = append(spans, b.body)
		}
		for _, code := range spans {
			for _, w := range codeWord.FindAllString(code, -1) {
				documented[w] = true
			}
		}
	}
	var missing []string
	for w, at := range words {
		if !documented[w] {
			missing = append(missing, w+" (parsed at "+at+")")
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("the Caddyfile reference (docs/caddyfile.md, docs/sources.md) does not name %s", m)
	}
}

// codeWord is a word of code: what a directive name is made of.
var codeWord = regexp.MustCompile(`[A-Za-z0-9_]+`)

// directiveWord is what a directive, sub-directive or keyword looks like;
// other strings a parser compares with ("{", "", a MIME type) are not
// names to document.
var directiveWord = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// parserWords reads every non-test Go file under root and returns the
// words the Caddyfile parser functions compare tokens with, each with the
// place of its first use.
func parserWords(t *testing.T, root string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs := map[string][]*ast.File{} // by directory
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkgs[filepath.Dir(path)] = append(pkgs[filepath.Dir(path)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	words := map[string]string{}
	for _, files := range pkgs {
		consts := stringConsts(files)
		for _, f := range files {
			local := importName(f, caddyfilePkg)
			if local == "" {
				continue
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil || !takesPackageType(fn, local) {
					continue
				}
				for _, lit := range comparedStrings(fn.Body, consts) {
					if _, seen := words[lit.value]; !seen && directiveWord.MatchString(lit.value) {
						pos := fset.Position(lit.pos)
						rel, _ := filepath.Rel(root, pos.Filename)
						words[lit.value] = filepath.ToSlash(rel) + ":" + strconv.Itoa(pos.Line)
					}
				}
			}
		}
	}
	return words
}

// importName is the name file f gives the package path, or "".
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == path {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return path[strings.LastIndex(path, "/")+1:]
		}
	}
	return ""
}

// takesPackageType reports whether one of fn's parameters has a type of
// the package imported as local (caddyfile.Dispenser, *caddyfile.Dispenser,
// []caddyfile.Token, ...).
func takesPackageType(fn *ast.FuncDecl, local string) bool {
	for _, p := range fn.Type.Params.List {
		found := false
		ast.Inspect(p.Type, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
					found = true
				}
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// stringConsts are the package's string constants by name.
func stringConsts(files []*ast.File) map[string]string {
	consts := map[string]string{}
	for _, f := range files {
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							consts[name.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			}
		}
	}
	return consts
}

type stringAt struct {
	value string
	pos   token.Pos
}

// comparedStrings are the string constants (literals, or the package's
// named constants) in body's case clauses and == / != comparisons.
func comparedStrings(body *ast.BlockStmt, consts map[string]string) []stringAt {
	var out []stringAt
	add := func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.BasicLit:
			if e.Kind == token.STRING {
				if v, err := strconv.Unquote(e.Value); err == nil {
					out = append(out, stringAt{v, e.Pos()})
				}
			}
		case *ast.Ident:
			if v, ok := consts[e.Name]; ok {
				out = append(out, stringAt{v, e.Pos()})
			}
		}
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CaseClause:
			for _, e := range n.List {
				add(e)
			}
		case *ast.BinaryExpr:
			if n.Op == token.EQL || n.Op == token.NEQ {
				add(n.X)
				add(n.Y)
			}
		}
		return true
	})
	return out
}
