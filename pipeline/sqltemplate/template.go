package sqltemplate

import (
	"fmt"
	"strings"
)

// template is one {{ ... }} in the operator's text.
type template struct {
	start, end int // byte offsets of "{{" and just past "}}"
	env        bool
	name       string
	ident      bool // written with "| ident"
}

// scanTemplates finds every {{ ... }} in src, wherever it is (code, string,
// comment): env templates are substituted everywhere, and an input template
// outside code must be found to be refused. So "{{" is reserved in the
// whole statement, and anything that is not a template we understand is an
// error rather than text, which keeps typos such as {{ input.x }} from
// reaching the database.
func scanTemplates(src string) ([]template, *lexError) {
	var out []template
	for i := 0; ; {
		k := strings.Index(src[i:], "{{")
		if k < 0 {
			return out, nil
		}
		start := i + k
		k = strings.Index(src[start+2:], "}}")
		if k < 0 || strings.Contains(src[start+2:start+2+k], "{{") {
			return nil, &lexError{start, `unclosed "{{": missing "}}"`}
		}
		end := start + 2 + k + 2
		t, msg := parseTemplate(src[start+2 : end-2])
		if msg != "" {
			return nil, &lexError{start, msg}
		}
		t.start, t.end = start, end
		out = append(out, t)
		i = end
	}
}

const templateHelp = `write {{ inputs.NAME }} or {{ env.NAME }}` +
	` (to put two braces in SQL text, separate them: "{ {")`

// parseTemplate reads the inside of {{ }}: "ns.NAME" optionally followed by
// "| ident", with optional whitespace. msg says what is wrong, if anything.
func parseTemplate(inner string) (t template, msg string) {
	show := "{{" + inner + "}}"
	f := templateFields(inner)
	if len(f) == 0 {
		return t, "empty template " + show + "; " + templateHelp
	}
	path := f[0]
	ns, name, dotted := strings.Cut(path, ".")
	switch {
	case ns != "inputs" && ns != "env":
		if !dotted {
			return t, fmt.Sprintf("unknown template %s; %s", show, templateHelp)
		}
		return t, fmt.Sprintf("unknown namespace %q in %s; %s", ns, show, templateHelp)
	case name == "":
		return t, fmt.Sprintf("missing name after %q in %s", ns+".", show)
	case !validName(name):
		return t, fmt.Sprintf("invalid name %q in %s: a name is letters, digits and _, not starting with a digit", name, show)
	}
	t.env, t.name = ns == "env", name
	rest := f[1:]
	if len(rest) == 0 {
		return t, ""
	}
	if rest[0] != "|" {
		return t, fmt.Sprintf("unexpected %q after %s in %s; the only filter is %q, written {{ inputs.NAME | ident }}", rest[0], path, show, "ident")
	}
	switch {
	case len(rest) == 1:
		return t, fmt.Sprintf("missing filter name after \"|\" in %s", show)
	case rest[1] != "ident":
		return t, fmt.Sprintf("unknown filter %q in %s; the only filter is %q (an enum input in identifier position)", rest[1], show, "ident")
	case t.env:
		return t, fmt.Sprintf("filter %q applies to inputs only, not to %s", "ident", show)
	case len(rest) > 2:
		return t, fmt.Sprintf("unexpected %q after the filter in %s", rest[2], show)
	}
	t.ident = true
	return t, ""
}

// templateFields splits the inside of a template at whitespace and around
// "|", so "inputs.x|ident" and "inputs.x | ident" read the same.
func templateFields(s string) []string {
	return strings.Fields(strings.ReplaceAll(s, "|", " | "))
}

// validName accepts the names a template may use: [A-Za-z_][A-Za-z0-9_]*.
func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || 'a' <= c|0x20 && c|0x20 <= 'z' || i > 0 && isDigit(c)) {
			return false
		}
	}
	return s != ""
}
