package docs

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	// Caddy's standard modules, as in a build: reverse_proxy, tracing, log writers.
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	// The module and its built-in connectors and sources, as in a build.
	_ "github.com/edgemcp/edgemcp"
)

// Every ```caddyfile block of README.md and docs/*.md adapts with Caddy's
// own adapter, with no warning. It is formatted as `caddy fmt` formats it,
// except for the runs of spaces that line comments up (`caddy fmt` makes
// each one space; aligned, the examples read better). A block is one of
// (docs/caddyfile.md, "Reading this reference"):
//   - a whole Caddyfile: it starts with global options `{` or a site
//     address (`api.example.com {`, `:8080 {`);
//   - a site's directives, starting with `mcp`: it is put in a site;
//   - anything else is a piece of an mcp block (`tool ...`, `connector
//     ...`, `source ...`): it is put in `mcp /mcp { }` in a site.
//
// Adapting reads no file a block names and contacts nothing: scripts,
// documents and databases are opened when the config is provisioned.
// Synopses with <placeholders> and a|b alternatives are fenced as text.
func TestDocCaddyfilesAdapt(t *testing.T) {
	adapter := caddyconfig.GetAdapter("caddyfile")
	n := 0
	for _, f := range docFiles(t) {
		blocks, _ := fences(f)
		for _, b := range blocks {
			if b.lang != "caddyfile" {
				continue
			}
			n++
			where := fmt.Sprintf("%s:%d", f.path, b.line)
			wrapped, above := wrapCaddyfile(b.body)
			// Blank lines first put each line of the block at its line in
			// the document, so that Caddy's messages name that line.
			input := strings.Repeat("\n", b.line-above) + wrapped
			_, warnings, err := adapter.Adapt([]byte(input), map[string]any{"filename": f.path})
			if err != nil {
				t.Errorf("%v\n%s", err, wrapped)
				continue
			}
			unformatted, _ := caddyfile.FormattingDifference(f.path, []byte(input))
			for _, w := range warnings {
				if w == unformatted {
					continue // checked below without the alignment
				}
				t.Errorf("%s: warning: %s\n%s", where, w.String(), wrapped)
			}
			if w, differs := caddyfile.FormattingDifference("block", []byte(unaligned(wrapped))); differs {
				t.Errorf("%s: not as caddy fmt formats it (spaces that align comments aside): %s\n%s", where, w.String(), wrapped)
			}
		}
	}
	if n == 0 {
		t.Fatal("no caddyfile block found: the fence reader is broken")
	}
	t.Logf("%d caddyfile blocks adapted", n)
}

// wrapCaddyfile makes a documentation block a whole Caddyfile, as
// TestDocCaddyfilesAdapt describes, and says how many lines it put above
// the block; a wrapped block is indented with tabs, as `caddy fmt` would
// indent it.
func wrapCaddyfile(block string) (string, int) {
	first := strings.Fields(block)
	switch {
	case len(first) == 0 || first[0] == "{" || opensSite(block):
		return block, 0
	case first[0] == "mcp":
		return "example.com {\n" + indent(block, 1) + "}\n", 1
	default:
		return "example.com {\n\tmcp /mcp {\n" + indent(block, 2) + "\t}\n}\n", 2
	}
}

// opensSite reports whether the block's first line opens a site: its
// first word is an address (a host name with a dot, a :port, a URL).
func opensSite(block string) bool {
	line, _, _ := strings.Cut(strings.TrimSpace(block), "\n")
	words := strings.Fields(line)
	if len(words) < 2 || words[len(words)-1] != "{" {
		return false
	}
	addr := words[0]
	return strings.Contains(addr, ".") || strings.HasPrefix(addr, ":") || strings.Contains(addr, "://") || addr == "localhost"
}

// innerSpaces are two or more spaces after a line's first word.
var innerSpaces = regexp.MustCompile(`(?m)(\S)  +`)

// unaligned is the Caddyfile with the spaces that align comments made
// one, as `caddy fmt` writes them.
func unaligned(input string) string {
	return innerSpaces.ReplaceAllString(input, "$1 ")
}

// indent puts depth tabs before every line that is not empty; a heredoc's
// body moves with it, which Caddy allows as long as its closing marker
// moves too.
func indent(block string, depth int) string {
	tabs := strings.Repeat("\t", depth)
	lines := strings.Split(strings.TrimRight(block, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = tabs + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// The wrapping rules on the three kinds of block.
func TestWrapCaddyfile(t *testing.T) {
	for _, c := range []struct {
		block, want string
		above       int
	}{
		{"{\n\tadmin off\n}\n", "{\n\tadmin off\n}\n", 0},
		{"api.example.com {\n\tmcp\n}\n", "api.example.com {\n\tmcp\n}\n", 0},
		{":8080 {\n\tmcp\n}\n", ":8080 {\n\tmcp\n}\n", 0},
		{"mcp /mcp {\n\tname x\n}\n", "example.com {\n\tmcp /mcp {\n\t\tname x\n\t}\n}\n", 1},
		{"tool x {\n\tdescription y\n\n\thandler z.js\n}\n",
			"example.com {\n\tmcp /mcp {\n\t\ttool x {\n\t\t\tdescription y\n\n\t\t\thandler z.js\n\t\t}\n\t}\n}\n", 2},
		{"source docs.example mcp https://a.example/mcp\n", "example.com {\n\tmcp /mcp {\n\t\tsource docs.example mcp https://a.example/mcp\n\t}\n}\n", 2},
	} {
		if got, above := wrapCaddyfile(c.block); got != c.want || above != c.above {
			t.Errorf("wrapCaddyfile(%q) = %q, %d; want %q, %d", c.block, got, above, c.want, c.above)
		}
	}
}
