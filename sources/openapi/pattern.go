package openapi

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
)

// ecmaPattern rewrites a schema's pattern so that it compiles as an
// ECMAScript regular expression with the u flag, as the TypeScript SDK
// (through ajv) and LangChain compile the patterns of tools/list: one
// pattern that does not compile there fails the whole listing, every tool
// of the endpoint.
//
// OpenAPI's patterns are ECMAScript's dialect without flags, whose legacy
// grammar (Annex B) accepts what u mode refuses. Each such construct is
// rewritten to the form that means the same in both:
//
//	\- \_ \: \@ \# ...   an escaped character that needs no escape: the character
//	[\w-.]               a class range from a class escape: the hyphen escaped
//	{ } ]                a lone brace or bracket: escaped
//
// What has no certain equivalent (an escaped letter such as \Z or \A, an
// inline flag (?i), a back reference to a group that does not exist, a
// Unicode property JavaScript does not know) makes ok false: the pattern is
// left out of the published schema (the upstream still checks its values).
func ecmaPattern(p string) (out string, ok bool) {
	groups, names := countGroups(p)
	var b strings.Builder
	r := []rune(p)
	inClass := false
	classStart := 0          // index in r just after '[' (and '^')
	prevClassEscape := false // the last class atom was \d, \w, \s or \p{...}
	// Outside a class: atom says a quantifier may follow (u mode refuses
	// one after an assertion or a lookaround), quantified that one just
	// did (so '?' is its lazy marker), lookaround which open groups are
	// lookarounds.
	atom, quantified := false, false
	var lookaround []bool
	for i := 0; i < len(r); i++ {
		c := r[i]
		if inClass {
			switch {
			case c == '\\':
				if i+1 >= len(r) {
					return "", false
				}
				esc, n, class, ok := ecmaEscape(r[i+1:], true, groups, names)
				if !ok || class && prevRange(b.String()) && prevClassEscape {
					return "", false
				}
				if class && prevRange(b.String()) {
					// "a-\d": the hyphen is itself (Annex B); u mode wants it escaped.
					s := b.String()
					b.Reset()
					b.WriteString(s[:len(s)-1] + `\-`)
				}
				b.WriteString(esc)
				i += n
				prevClassEscape = class
			case c == ']':
				inClass = false
				atom, quantified = true, false
				b.WriteRune(c)
			case c == '-' && i > classStart && i+1 < len(r) && r[i+1] != ']' && prevClassEscape:
				// "\d-a": a range from a class; Annex B reads the hyphen as
				// itself, u mode refuses it.
				b.WriteString(`\-`)
				prevClassEscape = false
			default:
				b.WriteRune(c)
				prevClassEscape = false
			}
			continue
		}
		switch c {
		case '\\':
			if i+1 >= len(r) {
				return "", false
			}
			esc, n, _, ok := ecmaEscape(r[i+1:], false, groups, names)
			if !ok {
				return "", false
			}
			b.WriteString(esc)
			i += n
			atom, quantified = esc != `\b` && esc != `\B`, false
		case '[':
			inClass = true
			b.WriteRune(c)
			if i+1 < len(r) && r[i+1] == '^' {
				b.WriteRune('^')
				i++
			}
			classStart = i + 1
			prevClassEscape = false
		case ']', '}':
			b.WriteString(`\` + string(c))
			atom, quantified = true, false
		case '{':
			if n := quantifierLen(r[i:]); n > 0 {
				if !atom {
					return "", false
				}
				b.WriteString(string(r[i : i+n]))
				i += n - 1
				atom, quantified = false, true
				continue
			}
			b.WriteString(`\{`)
			atom, quantified = true, false
		case '*', '+', '?':
			switch {
			case c == '?' && quantified:
				quantified = false // lazy
			case atom:
				atom, quantified = false, true
			default:
				return "", false // nothing to repeat
			}
			b.WriteRune(c)
		case '(':
			look, opener := false, "("
			if i+1 < len(r) && r[i+1] == '?' {
				rest := string(r[i+2:])
				switch {
				case strings.HasPrefix(rest, ":"), strings.HasPrefix(rest, "="), strings.HasPrefix(rest, "!"):
					opener = "(?" + rest[:1]
				case strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, "<!"):
					opener = "(?" + rest[:2]
				case groupName.MatchString(rest):
					opener = "(?" + groupName.FindString(rest)
				default:
					return "", false // (?i), (?P<n>, (?#...), (?>...): not ECMAScript
				}
				look = opener != "(?:" && !strings.HasSuffix(opener, ">")
			}
			lookaround = append(lookaround, look)
			b.WriteString(opener)
			i += len([]rune(opener)) - 1
			atom, quantified = false, false
		case ')':
			if len(lookaround) == 0 {
				return "", false
			}
			atom, quantified = !lookaround[len(lookaround)-1], false
			lookaround = lookaround[:len(lookaround)-1]
			b.WriteRune(c)
		case '|', '^', '$':
			b.WriteRune(c)
			atom, quantified = false, false
		default:
			b.WriteRune(c)
			atom, quantified = true, false
		}
	}
	if inClass || len(lookaround) > 0 {
		return "", false
	}
	return b.String(), true
}

// prevRange: a class so far ends with a hyphen that makes a range ("a-").
func prevRange(s string) bool {
	return len(s) >= 2 && s[len(s)-1] == '-' && s[len(s)-2] != '[' && s[len(s)-2] != '^' && !strings.HasSuffix(s, `\-`)
}

// groupName is a named group's opening after "(?".
var groupName = regexp.MustCompile(`^<[\p{L}$_][\p{L}\p{N}$_]*>`)

// countGroups counts a pattern's capturing groups and collects its group
// names (for back references).
func countGroups(p string) (int, map[string]bool) {
	names := map[string]bool{}
	n := 0
	inClass := false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			i++
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		case c == '(':
			if i+1 < len(p) && p[i+1] == '?' {
				if m := groupName.FindString(p[i+2:]); m != "" {
					names[m[1:len(m)-1]] = true
					n++
				}
				continue
			}
			n++
		}
	}
	return n, names
}

// quantifierLen is the length of a {n}, {n,} or {n,m} quantifier at the
// start of r, 0 when there is none.
func quantifierLen(r []rune) int {
	i := 1
	digits := func() int {
		start := i
		for i < len(r) && r[i] >= '0' && r[i] <= '9' {
			i++
		}
		return i - start
	}
	if digits() == 0 {
		return 0
	}
	if i < len(r) && r[i] == ',' {
		i++
		digits()
	}
	if i < len(r) && r[i] == '}' {
		return i + 1
	}
	return 0
}

// startsClassEscape: r starts with \d, \D, \s, \S, \w, \W, \p or \P.
func startsClassEscape(r []rune) bool {
	return len(r) >= 2 && r[0] == '\\' && strings.ContainsRune("dDsSwWpP", r[1])
}

// ecmaEscape reads the escape after a backslash (r starts after it) and
// returns what to write, how many runes it took, whether it is a class
// escape (\d \w \s \p{...}) and whether it has a u-mode form.
func ecmaEscape(r []rune, inClass bool, groups int, names map[string]bool) (string, int, bool, bool) {
	c := r[0]
	switch {
	case strings.ContainsRune(`^$\.*+?()[]{}|/`, c):
		return `\` + string(c), 1, false, true
	case c == '-':
		if inClass {
			return `\-`, 1, false, true
		}
		return "-", 1, false, true
	case strings.ContainsRune("dDsSwW", c):
		return `\` + string(c), 1, true, true
	case strings.ContainsRune("fnrtv", c):
		return `\` + string(c), 1, false, true
	case c == 'b' || c == 'B':
		return `\` + string(c), 1, false, c == 'b' || !inClass
	case c == '0':
		if len(r) > 1 && r[1] >= '0' && r[1] <= '9' {
			return "", 0, false, false // legacy octal
		}
		return `\0`, 1, false, true
	case c >= '1' && c <= '9':
		n := 1
		for n < len(r) && r[n] >= '0' && r[n] <= '9' {
			n++
		}
		ref, _ := strconv.Atoi(string(r[:n]))
		return `\` + string(r[:n]), n, false, !inClass && ref <= groups
	case c == 'c':
		ok := len(r) > 1 && (r[1] >= 'a' && r[1] <= 'z' || r[1] >= 'A' && r[1] <= 'Z')
		if !ok {
			return "", 0, false, false
		}
		return `\c` + string(r[1]), 2, false, true
	case c == 'x':
		if len(r) >= 3 && isHex(r[1]) && isHex(r[2]) {
			return `\x` + string(r[1:3]), 3, false, true
		}
		return "", 0, false, false
	case c == 'u':
		if len(r) >= 5 && isHex(r[1]) && isHex(r[2]) && isHex(r[3]) && isHex(r[4]) {
			return `\u` + string(r[1:5]), 5, false, true
		}
		if len(r) >= 3 && r[1] == '{' {
			end := strings.IndexRune(string(r), '}')
			if end > 2 {
				v, err := strconv.ParseUint(string(r[2:end]), 16, 32)
				if err == nil && v <= unicode.MaxRune {
					return `\` + string(r[:end+1]), end + 1, false, true
				}
			}
		}
		return "", 0, false, false
	case c == 'k':
		if inClass || len(r) < 3 || r[1] != '<' {
			return "", 0, false, false
		}
		end := strings.IndexRune(string(r), '>')
		if end < 0 || !names[string(r[2:end])] {
			return "", 0, false, false
		}
		return `\` + string(r[:end+1]), end + 1, false, true
	case c == 'p' || c == 'P':
		if len(r) < 3 || r[1] != '{' {
			return "", 0, false, false
		}
		end := strings.IndexRune(string(r), '}')
		if end < 0 || !unicodeProperty(string(r[2:end])) {
			return "", 0, false, false
		}
		return `\` + string(r[:end+1]), end + 1, true, true
	case unicode.IsLetter(c) || unicode.IsDigit(c):
		// \Z, \A, \h...: a letter to ECMAScript, an anchor or a class to
		// the engine the author had in mind. Nothing certain to write.
		return "", 0, false, false
	}
	// An escaped character that needs no escape: itself.
	return string(c), 1, false, true
}

// unicodeProperty reports whether \p{name} is a property ECMAScript knows:
// a general category, a script (Script=, sc=, Script_Extensions=, scx=),
// or one of the binary properties below. Go's unicode tables name the
// categories and scripts as ECMAScript does.
func unicodeProperty(name string) bool {
	if k, v, ok := strings.Cut(name, "="); ok {
		switch k {
		case "General_Category", "gc":
			return unicode.Categories[v] != nil || longCategories[v]
		case "Script", "sc", "Script_Extensions", "scx":
			return unicode.Scripts[v] != nil
		}
		return false
	}
	return unicode.Categories[name] != nil || longCategories[name] || binaryProperties[name]
}

var longCategories = map[string]bool{
	"Letter": true, "Cased_Letter": true, "Uppercase_Letter": true, "Lowercase_Letter": true, "Titlecase_Letter": true,
	"Modifier_Letter": true, "Other_Letter": true, "Mark": true, "Nonspacing_Mark": true, "Spacing_Mark": true,
	"Enclosing_Mark": true, "Number": true, "Decimal_Number": true, "Letter_Number": true, "Other_Number": true,
	"Punctuation": true, "Connector_Punctuation": true, "Dash_Punctuation": true, "Open_Punctuation": true,
	"Close_Punctuation": true, "Initial_Punctuation": true, "Final_Punctuation": true, "Other_Punctuation": true,
	"Symbol": true, "Math_Symbol": true, "Currency_Symbol": true, "Modifier_Symbol": true, "Other_Symbol": true,
	"Separator": true, "Space_Separator": true, "Line_Separator": true, "Paragraph_Separator": true,
	"Other": true, "Control": true, "Format": true, "Surrogate": true, "Private_Use": true, "Unassigned": true,
	"LC": true,
}

var binaryProperties = map[string]bool{
	"Alphabetic": true, "Alpha": true, "ASCII": true, "Any": true, "Assigned": true, "White_Space": true, "space": true,
	"Uppercase": true, "Upper": true, "Lowercase": true, "Lower": true, "Emoji": true, "Ideographic": true, "Ideo": true,
	"ASCII_Hex_Digit": true, "Hex_Digit": true, "Math": true, "Dash": true,
}

// argumentPatterns compiles the patterns the gateway checks arguments
// against: the document's pattern in its ECMAScript-with-u form, in Go's
// RE2. A pattern RE2 cannot run (a lookahead, a back reference) accepts
// every value: the upstream still checks it, and refusing every call with
// that argument would be worse.
func argumentPatterns(expr string) (openapi3.RegexMatcher, error) {
	if p, ok := ecmaPattern(expr); ok {
		expr = p
	}
	if re, err := regexp.Compile(goUnicodeEscape.ReplaceAllString(expr, `\x{$1$2}`)); err == nil {
		return re, nil
	}
	return anyString{}, nil
}

// goUnicodeEscape is ECMAScript's \uXXXX and \u{X...}, which RE2 writes \x{...}.
var goUnicodeEscape = regexp.MustCompile(`\\u\{([0-9A-Fa-f]+)\}|\\u([0-9A-Fa-f]{4})`)

type anyString struct{}

func (anyString) MatchString(string) bool { return true }
