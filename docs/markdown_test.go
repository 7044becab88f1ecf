// Package docs holds the tests that keep the documentation true: its links
// resolve, its Caddyfile examples adapt, and its Caddyfile reference names
// every directive the parser accepts. The package has no code of its own.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// mdFile is one markdown file of the documentation, its path relative to
// the repository root.
type mdFile struct {
	path string
	text string
}

// docFiles are the documentation the tests hold: README.md and docs/*.md.
// Tests run in this directory, one below the repository root.
func docFiles(t *testing.T) []mdFile {
	t.Helper()
	paths, err := filepath.Glob("*.md")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	var files []mdFile
	for _, p := range append([]string{"../README.md"}, paths...) {
		files = append(files, readDoc(t, p))
	}
	return files
}

func readDoc(t *testing.T, path string) mdFile {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return mdFile{path: filepath.ToSlash(filepath.Join("docs", path)), text: string(raw)}
}

// fence is a fenced code block: its info string's first word, the line
// of its opening fence, and its lines with the fence's indentation removed
// (a block inside a list item is indented with the item).
type fence struct {
	lang string
	line int
	body string
}

// fenceLine opens a fence: backticks, then an info string without any
// (a line like "```` ```caddyfile ````" is a code span, not a fence).
var fenceLine = regexp.MustCompile("^([ \t]*)(```+)([^`]*)$")

// fences returns the file's fenced code blocks, and its text with every
// line of them blanked (line numbers kept) for the prose checks.
func fences(f mdFile) ([]fence, string) {
	lines := strings.Split(f.text, "\n")
	var out []fence
	for i := 0; i < len(lines); i++ {
		m := fenceLine.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, marker := m[1], m[2]
		fc := fence{line: i + 1}
		if info := strings.Fields(m[3]); len(info) > 0 {
			fc.lang = info[0]
		}
		var body []string
		lines[i] = ""
		for i++; i < len(lines); i++ {
			if strings.HasPrefix(strings.TrimLeft(lines[i], " \t"), marker) &&
				strings.TrimSpace(strings.TrimLeft(strings.TrimLeft(lines[i], " \t"), "`")) == "" {
				lines[i] = ""
				break
			}
			body = append(body, strings.TrimPrefix(lines[i], indent))
			lines[i] = ""
		}
		fc.body = strings.Join(body, "\n") + "\n"
		out = append(out, fc)
	}
	return out, strings.Join(lines, "\n")
}

// codeSpans returns the contents of the inline code spans of prose, and
// prose with each span blanked (newlines kept): a link or heading written
// inside a span is not one.
func codeSpans(prose string) ([]string, string) {
	var spans []string
	b := []byte(prose)
	for i := 0; i < len(b); {
		n := backticks(b, i)
		if n == 0 {
			i++
			continue
		}
		open := i
		i += n
		end := i
		for end < len(b) && backticks(b, end) != n {
			end += max(1, backticks(b, end))
		}
		if end == len(b) {
			continue // an unmatched run is literal backticks
		}
		spans = append(spans, string(b[i:end]))
		for k := open; k < end+n; k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
		i = end + n
	}
	return spans, string(b)
}

// backticks is the length of the run of backticks at b[i].
func backticks(b []byte, i int) int {
	n := 0
	for i+n < len(b) && b[i+n] == '`' {
		n++
	}
	return n
}

var (
	headingLine = regexp.MustCompile(`(?m)^(#{1,6})[ \t]+(.+?)[ \t#]*$`)
	inlineLink  = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// anchors are the ids GitHub gives the file's headings: the heading's
// text as rendered, lower-cased, with everything but letters, digits,
// spaces, '-' and '_' removed and each space made '-'; a repeated id gets
// -1, -2, ... in order.
func anchors(f mdFile) map[string]bool {
	_, prose := fences(f)
	ids := map[string]bool{}
	seen := map[string]int{}
	for _, m := range headingLine.FindAllStringSubmatch(prose, -1) {
		text := inlineLink.ReplaceAllString(m[2], "$1")
		text = strings.NewReplacer("`", "", "*", "").Replace(text)
		var slug strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				slug.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
				slug.WriteRune(r)
			}
		}
		id := slug.String()
		if n := seen[id]; n > 0 {
			seen[id] = n + 1
			id += "-" + strconv.Itoa(n)
		} else {
			seen[id] = 1
		}
		ids[id] = true
	}
	return ids
}

// The fence reader: a fence in a list item loses the item's indentation, a
// code span that starts a line is not a fence, and prose keeps its lines.
func TestFences(t *testing.T) {
	f := mdFile{path: "x.md", text: "text\n" +
		"- item:\n\n  ```caddyfile\n  tool x {\n  \tdescription y\n  }\n  ```\n" +
		"  ```` ```text ```` is a span\n" +
		"```\nplain\n```\n"}
	blocks, prose := fences(f)
	if len(blocks) != 2 || blocks[0].lang != "caddyfile" || blocks[0].line != 4 ||
		blocks[0].body != "tool x {\n\tdescription y\n}\n" || blocks[1].lang != "" || blocks[1].body != "plain\n" {
		t.Fatalf("blocks %+v", blocks)
	}
	if strings.Count(prose, "\n") != strings.Count(f.text, "\n") || !strings.Contains(prose, "is a span") || strings.Contains(prose, "plain") {
		t.Errorf("prose %q", prose)
	}
	spans, rest := codeSpans("a `b` c ``d ` e`` f")
	if len(spans) != 2 || spans[0] != "b" || spans[1] != "d ` e" || strings.ContainsAny(rest, "bde`") {
		t.Errorf("spans %q, rest %q", spans, rest)
	}
}
