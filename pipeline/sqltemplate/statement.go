package sqltemplate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Statement is a compiled statement. It is immutable and safe for
// concurrent use.
type Statement struct {
	dialect Dialect
	text    string   // as prepared; identifier slots written {{ inputs.x }}
	tokens  []Token  // Lex(text)
	params  []string // distinct inputs bound as parameters, in parameter order
	args    []string // the input behind each parameter marker, in order
	pieces  []piece  // text split at identifier slots; nil when static
	idents  map[string]identSlot
	auth    map[string]authRef // identity values bound as parameters, by slot name
}

// piece is literal SQL text, or an identifier slot when input is set.
type piece struct {
	text  string
	input string
}

// identSlot holds what an enum input in identifier position may become:
// every allowed value already quoted, so Render only looks it up.
type identSlot struct {
	quoted  map[string]string
	allowed string // for error messages: "a", "b"
}

// Dialect is the dialect the statement was compiled for.
func (s *Statement) Dialect() Dialect { return s.dialect }

// Params lists the distinct inputs bound as parameters, in parameter order.
func (s *Statement) Params() []string { return slices.Clone(s.params) }

// Static reports whether the SQL text is the same for every call (no
// identifier substitutions), so a connector may prepare it once.
func (s *Statement) Static() bool { return s.pieces == nil }

// Text is the SQL as prepared, with dialect placeholders for bound values;
// identifier slots are shown as {{ inputs.x }}. For logs and spans: it
// never contains values.
func (s *Statement) Text() string { return s.text }

// Tokens are the significant tokens of Text, as Lex(Text(), Dialect())
// returns them: env values are substituted, each bound input is a BindParam
// token ($1 or ?) and each identifier slot a Placeholder token; Offset is a
// byte offset in Text.
func (s *Statement) Tokens() []Token { return slices.Clone(s.tokens) }

// padSafe are the characters next to which a substituted marker or
// identifier needs no space. Next to anything else (a quote, "&", "@", "#",
// another template ...) a space is added so that the substitution cannot
// merge with its neighbour: "x"{{ inputs.c | ident }} must not become one
// identifier "x""c", nor U&{{ ... }} a Unicode-escape identifier. "-" is
// here so that no space ever turns "--" into a MySQL comment.
const padSafe = "(),;=<>+-*/%|.[]:~^!"

func needsPad(c byte) bool {
	return !isSpace(c) && strings.IndexByte(padSafe, c) < 0
}

// build assembles the Statement from the tokens of the expanded text:
// numbering parameters, deciding identifier slots and checking them.
func (c *compiler) build(toks []Token) (*Statement, *CompileError) {
	d := c.opts.Dialect
	why := identPositions(toks)
	st := &Statement{dialect: d, auth: c.auth}
	num := map[string]int{}
	type cut struct {
		start, end int
		input      string
	}
	var cuts []cut
	var text strings.Builder
	text.Grow(len(c.exp))
	last := 0 // c.exp is copied to text up to here
	for i, t := range toks {
		if t.Kind != Placeholder {
			st.tokens = append(st.tokens, Token{t.Kind, t.Text, text.Len() + t.Offset - last})
			continue
		}
		s, end := c.slots[t.Offset], t.Offset+len(t.Text)
		text.WriteString(c.exp[last:t.Offset])
		// The test is on the written text: the previous substitution may
		// have added the space already.
		if w := text.String(); w != "" && needsPad(w[len(w)-1]) {
			text.WriteByte(' ')
		}
		reason := why[i]
		if s.ident {
			reason = `marked "| ident"`
		}
		if reason != "" && isAuth(s.name) {
			return nil, errorAt(c.src, s.src, fmt.Sprintf("identity value %s is in identifier position (%s): identity values are always bound as parameters, so one cannot name a column or table", s.name, reason))
		}
		if reason != "" {
			if err := c.identSlot(st, s, reason); err != nil {
				return nil, err
			}
			st.tokens = append(st.tokens, Token{Placeholder, t.Text, text.Len()})
			cuts = append(cuts, cut{text.Len(), text.Len() + len(t.Text), s.name})
			text.WriteString(t.Text)
		} else {
			n, seen := num[s.name]
			if !seen {
				n = len(num) + 1
				num[s.name] = n
				st.params = append(st.params, s.name)
			}
			marker := "?"
			if d == Postgres {
				marker = "$" + strconv.Itoa(n)
			} else {
				st.args = append(st.args, s.name) // ? repeats the argument
			}
			st.tokens = append(st.tokens, Token{BindParam, marker, text.Len()})
			text.WriteString(marker)
		}
		if end < len(c.exp) && needsPad(c.exp[end]) {
			text.WriteByte(' ')
		}
		last = end
	}
	text.WriteString(c.exp[last:])
	st.text = text.String()
	if d == Postgres {
		st.args = st.params // $n reuses the argument
	}
	if len(cuts) > 0 {
		prev := 0
		for _, ct := range cuts {
			st.pieces = append(st.pieces, piece{text: st.text[prev:ct.start]}, piece{input: ct.input})
			prev = ct.end
		}
		st.pieces = append(st.pieces, piece{text: st.text[prev:]})
	}
	return st, nil
}

// identSlot checks that an input in identifier position is an enum whose
// every value can be written as an identifier, and prepares the quoted forms.
func (c *compiler) identSlot(st *Statement, s slot, reason string) *CompileError {
	if _, done := st.idents[s.name]; done {
		return nil
	}
	p := c.opts.Inputs[s.name]
	if len(p.Enum) == 0 {
		return errorAt(c.src, s.src, fmt.Sprintf("input %q is in identifier position (%s) but is not an enum: a column or table name cannot be a bound parameter, so only an enum input, substituted from its allow-list, may stand there", s.name, reason))
	}
	is := identSlot{quoted: map[string]string{}}
	allowed := make([]string, len(p.Enum))
	for i, v := range p.Enum {
		if v == "" || strings.ContainsRune(v, 0) || slices.Contains(strings.Split(v, "."), "") {
			return errorAt(c.src, s.src, fmt.Sprintf("enum value %q of input %q cannot be written as an identifier (it is in identifier position, %s): empty name part or NUL byte", v, s.name, reason))
		}
		is.quoted[v] = quoteIdent(c.opts.Dialect, v)
		allowed[i] = strconv.Quote(v)
	}
	is.allowed = strings.Join(allowed, ", ")
	if st.idents == nil {
		st.idents = map[string]identSlot{}
	}
	st.idents[s.name] = is
	return nil
}
