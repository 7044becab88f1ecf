package sqltemplate

import "strings"

// Identifier position. A database can bind a value but not a name: in
// "ORDER BY $1" the parameter is a constant, so the sort silently does
// nothing, and "FROM $1" is a syntax error. So a placeholder where SQL
// expects a name must be substituted as text, which is only safe from an
// allow-list (an enum input). These rules recognise the places where a name
// is expected; "| ident" forces one the rules miss. They err on the side of
// value position where SQL is ambiguous, because a false "identifier" would
// refuse a correct statement with no way around it, while a missed one only
// binds a parameter that the database then rejects or ignores.

// frame is the state of one level of parentheses or brackets.
type frame struct {
	clause string // the last clause keyword seen at this level (BY clauses as "ORDER", "GROUP", "PARTITION")
	fn     string // the word before the opening parenthesis, upper-cased
}

// clauseWords end an ORDER BY / GROUP BY / PARTITION BY list at the same
// level: after them a comma no longer separates sort or grouping keys.
var clauseWords = wordSet(`SELECT FROM WHERE HAVING LIMIT OFFSET FETCH FOR WINDOW
	UNION INTERSECT EXCEPT RETURNING SET VALUES ON INTO WITH QUALIFY ROWS RANGE
	GROUPS SEPARATOR INSERT UPDATE DELETE MERGE`)

// nameAfter are the words after which SQL expects a table name. (SET, which
// the design brief does not list, is handled beside them: in UPDATE t SET
// {{ inputs.col }} = 1 the column is a name too, and no SQL takes a value
// right after SET or after a comma of its list.)
var nameAfter = wordSet(`FROM JOIN INTO UPDATE TABLE`)

// charsetSet reports whether t is the CHARACTER (or CHAR) of MySQL's
// CHARACTER SET, after which SET is not a clause.
func charsetSet(t Token) bool {
	w := upperWord(t)
	return w == "CHARACTER" || w == "CHAR"
}

// valueFromFns are the functions whose argument list uses FROM between two
// values: EXTRACT(YEAR FROM ts), SUBSTRING(s FROM 2), TRIM(x FROM s),
// OVERLAY(s PLACING x FROM 2).
var valueFromFns = wordSet(`EXTRACT SUBSTRING SUBSTR TRIM OVERLAY`)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// upperWord is the upper-cased text of an unquoted word, "" for any other
// token (a quoted "FROM" is a name, not the keyword).
func upperWord(t Token) string {
	if t.Kind == Keyword || t.Kind == Identifier {
		return strings.ToUpper(t.Text)
	}
	return ""
}

// identPositions returns, for each Placeholder token (by index) that stands
// where SQL expects a name, a short phrase saying why ("after ORDER BY"),
// used in the error for a non-enum input.
func identPositions(toks []Token) map[int]string {
	out := map[int]string{}
	stack := []frame{{}}
	for i, t := range toks {
		top := &stack[len(stack)-1]
		switch {
		case t.IsPunct("(") || t.IsPunct("["):
			f := frame{}
			if i > 0 {
				f.fn = upperWord(toks[i-1])
			}
			stack = append(stack, f)
		case t.IsPunct(")") || t.IsPunct("]"):
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case t.IsPunct(";"):
			stack = []frame{{}}
		case t.Kind == Keyword || t.Kind == Identifier:
			w := upperWord(t)
			switch {
			case w == "BY" && i > 0:
				if p := upperWord(toks[i-1]); p == "ORDER" || p == "GROUP" || p == "PARTITION" {
					top.clause = p
				}
			case w == "SET" && i > 0 && charsetSet(toks[i-1]):
				// CHARACTER SET utf8mb4 names a charset, not a SET clause.
			case clauseWords[w]:
				top.clause = w
			}
		case t.Kind == Placeholder:
			if why := identReason(toks, i, top); why != "" {
				out[i] = why
			}
		}
	}
	return out
}

func identReason(toks []Token, i int, top *frame) string {
	var prev, prev2, next Token
	if i > 0 {
		prev = toks[i-1]
	}
	if i > 1 {
		prev2 = toks[i-2]
	}
	if i+1 < len(toks) {
		next = toks[i+1]
	}
	switch w := upperWord(prev); {
	case w == "BY":
		if p := upperWord(prev2); p == "ORDER" || p == "GROUP" || p == "PARTITION" {
			return "after " + p + " BY"
		}
	case w == "FROM" && (upperWord(prev2) == "DISTINCT" || valueFromFns[top.fn]):
		// IS [NOT] DISTINCT FROM x, EXTRACT(... FROM x): a value.
	case nameAfter[w]:
		return "after " + w
	case w == "SET" && !charsetSet(prev2):
		return "after SET"
	case prev.IsPunct("."):
		return `after "."`
	case prev.IsPunct(",") && (top.clause == "ORDER" || top.clause == "GROUP" || top.clause == "PARTITION"):
		return "in the " + top.clause + " BY list"
	case prev.IsPunct(",") && top.clause == "SET":
		return "in the SET list"
	}
	switch w := upperWord(next); {
	case next.IsPunct("."):
		return `before "."`
	case w == "ASC" || w == "DESC" || w == "NULLS":
		return "before " + w
	}
	return ""
}
