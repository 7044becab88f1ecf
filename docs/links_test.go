package docs

import (
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
)

// A link in prose: [text](target "title"); the text may wrap lines.
var markdownLink = regexp.MustCompile(`\]\(([^)\s]*)(?:\s+"[^"]*")?\)`)

// Every relative link of README.md and docs/*.md reaches a file or folder
// of the repository, and every #anchor a heading of the file it names, by
// GitHub's rule for heading ids.
func TestDocLinks(t *testing.T) {
	files := docFiles(t)
	headings := map[string]map[string]bool{}
	for _, f := range files {
		headings[f.path] = anchors(f)
	}
	checked := 0
	for _, f := range files {
		_, prose := fences(f)
		_, prose = codeSpans(prose)
		for _, m := range markdownLink.FindAllStringSubmatchIndex(prose, -1) {
			target := prose[m[2]:m[3]]
			line := 1 + strings.Count(prose[:m[0]], "\n")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			file, anchor, _ := strings.Cut(target, "#")
			dest := f.path
			if file != "" {
				dest = path.Clean(path.Join(path.Dir(f.path), file))
				if _, err := os.Stat("../" + dest); err != nil {
					t.Errorf("%s:%d: link %q: no such file or folder %s", f.path, line, target, dest)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			ids, ok := headings[dest]
			if !ok {
				if !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s:%d: link %q: an anchor into %s, which is not markdown", f.path, line, target, dest)
					continue
				}
				ids = anchors(readDoc(t, "../"+dest))
				headings[dest] = ids
			}
			if !ids[anchor] {
				t.Errorf("%s:%d: link %q: %s has no heading with id %q", f.path, line, target, dest, anchor)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the link reader is broken")
	}
}

// The heading ids are GitHub's: what the links above rely on.
func TestAnchors(t *testing.T) {
	f := mdFile{path: "x.md", text: "# edgemcp\n" +
		"## `caddy mcp tools`: what a config declares\n" +
		"### Cache hit vs Caddy's `respond`\n" +
		"### Limits, cost per call, scale and overload\n" +
		"```\n# not a heading\n```\n" +
		"## Sources\n## Sources\n" +
		"## The [link](x.md) and **bold**\n"}
	got := anchors(f)
	for _, id := range []string{"edgemcp", "caddy-mcp-tools-what-a-config-declares", "cache-hit-vs-caddys-respond",
		"limits-cost-per-call-scale-and-overload", "sources", "sources-1", "the-link-and-bold"} {
		if !got[id] {
			t.Errorf("no id %q in %v", id, got)
		}
	}
	if got["not-a-heading"] || len(got) != 7 {
		t.Errorf("ids %v", got)
	}
}
