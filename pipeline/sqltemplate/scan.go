package sqltemplate

import (
	"encoding/json"
	"slices"
)

// Template is one {{ ... }} found in an operator's text by ScanTemplates.
type Template struct {
	Start, End int // byte offsets of "{{" and just past "}}"
	Env        bool
	Name       string
	Ident      bool // written with "| ident"
	// Auth is set for {{ auth.subject }} and {{ auth.claims.a.b }}: Name
	// is then "auth.subject" or "auth.claims.a.b", the key Identity.Lookup
	// takes, and Default holds "| default VALUE" when HasDefault.
	Auth       bool
	Default    any
	HasDefault bool
}

// ScanTemplates finds every {{ inputs.x }}, {{ env.X }} and {{ auth.… }} in src with the
// rules SQL statements use (anything else between braces is an error), for
// other statement languages (pipeline/cmdtemplate) to share them.
func ScanTemplates(src string) ([]Template, error) {
	ts, lerr := scanTemplates(src)
	if lerr != nil {
		return nil, lerr.at(src, nil)
	}
	out := make([]Template, len(ts))
	for i, t := range ts {
		out[i] = Template{Start: t.start, End: t.end, Env: t.env, Name: t.name, Ident: t.ident,
			Auth: t.auth != "", Default: t.def, HasDefault: t.hasDef}
	}
	return out, nil
}

// ErrorAt is a *CompileError at byte offset off of src (line and column).
func ErrorAt(src string, off int, msg string) error { return errorAt(src, off, msg) }

// BoundIdentity lists the identity values (auth.…) a statement binds,
// sorted, each with its "| default" shown as `name (default JSON)`. Text
// that does not scan lists none: loading the statement reports it.
func BoundIdentity(src string) []string {
	ts, err := ScanTemplates(src)
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, t := range ts {
		if !t.Auth || seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		v := t.Name
		if t.HasDefault {
			d, _ := json.Marshal(t.Default)
			v += " (default " + string(d) + ")"
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}
