package sqlagent

import (
	"fmt"
	"path"
	"strings"
)

// checkPatterns reports a malformed pattern.
func checkPatterns(lists ...[]string) error {
	for _, l := range lists {
		for _, p := range l {
			if _, err := path.Match(p, ""); err != nil || p == "" {
				return fmt.Errorf("table pattern %q is malformed (write schema.table or table, with * and ? as wildcards)", p)
			}
		}
	}
	return nil
}

// filter decides which tables the agent sees.
type filter struct{ include, exclude []string }

// matches: a pattern with a dot is matched against schema.table, one
// without against the table's name.
func matches(patterns []string, schema, table string) bool {
	for _, p := range patterns {
		s := table
		if strings.Contains(p, ".") {
			s = schema + "." + table
		}
		if ok, _ := path.Match(p, s); ok {
			return true
		}
	}
	return false
}

// shown reports whether schema.table is shown to the agent.
func (f filter) shown(schema, table string) bool {
	if len(f.include) > 0 && !matches(f.include, schema, table) {
		return false
	}
	return !matches(f.exclude, schema, table)
}

// excludedName reports whether a name written in a statement may stand
// for an excluded table: schema.table when qualified; a bare name
// matches a pattern without a dot, or one whose schema part matches any
// schema ("*.secrets") or the given default schema.
func (f filter) excludedName(schema, table, defaultSchema string) bool {
	if schema != "" {
		return matches(f.exclude, schema, table)
	}
	for _, p := range f.exclude {
		ps, pt, dotted := strings.Cut(p, ".")
		if !dotted {
			if ok, _ := path.Match(p, table); ok {
				return true
			}
			continue
		}
		if ok, _ := path.Match(pt, table); !ok {
			continue
		}
		if ok, _ := path.Match(ps, defaultSchema); ok || ps == "*" || defaultSchema == "" {
			return true
		}
	}
	return false
}
