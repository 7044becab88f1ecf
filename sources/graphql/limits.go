package graphql

import (
	"fmt"

	"github.com/vektah/gqlparser/v2/ast"
)

// Defaults of the limits on every document sent (`max_depth`, `max_fields`).
const (
	DefaultMaxDepth  = 10
	DefaultMaxFields = 200
)

// Limits bound a document: the nesting of its fields (a root field is
// depth 1) and their number, fragments counted where they are spread.
type Limits struct {
	MaxDepth  int
	MaxFields int
}

func (l Limits) withDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxFields <= 0 {
		l.MaxFields = DefaultMaxFields
	}
	return l
}

// Check reports the first limit op exceeds. doc must have passed
// validation (no fragment cycles); spreads are still guarded.
func (l Limits) Check(doc *ast.QueryDocument, op *ast.OperationDefinition) error {
	l = l.withDefaults()
	c := &counter{doc: doc, limits: l, spreading: map[string]bool{}}
	return c.walk(op.SelectionSet, 1)
}

type counter struct {
	doc       *ast.QueryDocument
	limits    Limits
	fields    int
	spreading map[string]bool
}

func (c *counter) walk(set ast.SelectionSet, depth int) error {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if depth > c.limits.MaxDepth {
				return fmt.Errorf("the query is nested deeper than %d fields (max_depth)", c.limits.MaxDepth)
			}
			if c.fields++; c.fields > c.limits.MaxFields {
				return fmt.Errorf("the query selects more than %d fields (max_fields)", c.limits.MaxFields)
			}
			if err := c.walk(s.SelectionSet, depth+1); err != nil {
				return err
			}
		case *ast.InlineFragment:
			if err := c.walk(s.SelectionSet, depth); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			f := c.doc.Fragments.ForName(s.Name)
			if f == nil || c.spreading[s.Name] {
				return fmt.Errorf("fragment %q is unknown or spreads itself", s.Name)
			}
			c.spreading[s.Name] = true
			err := c.walk(f.SelectionSet, depth)
			delete(c.spreading, s.Name)
			if err != nil {
				return err
			}
		}
	}
	return nil
}
