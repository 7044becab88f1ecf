package sqltemplate

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
)

// Param describes a declared input as the compiler needs it.
type Param struct {
	// Enum is the allow-list of an enum input (nil/empty when the input is
	// not an enum). Only enum inputs may appear in identifier position.
	Enum []string
}

// Options configure Compile.
type Options struct {
	Dialect Dialect          // Postgres, SQLite, MySQL
	Inputs  map[string]Param // declared inputs by name; a placeholder naming anything else is an error
	// LookupEnv resolves {{ env.NAME }}; nil means os.LookupEnv.
	LookupEnv func(name string) (string, bool)
	// Safety are the load-time checks of checkSafety (none when zero).
	Safety Rules
}

// slot is an input placeholder of the expanded text.
type slot struct {
	name  string
	ident bool // written with "| ident"
	src   int  // offset of its "{{" in the operator's text
}

type compiler struct {
	src   string
	opts  Options
	exp   string       // src with env values substituted and inputs in canonical form
	pos   posMap       // exp offsets → src offsets
	slots map[int]slot // by offset of "{{" in exp
	auth  map[string]authRef
}

// Compile turns an operator-written statement into a Statement. Every
// refusal is a *CompileError.
func Compile(src string, opts Options) (*Statement, error) {
	switch opts.Dialect {
	case Postgres, SQLite, MySQL:
	default:
		return nil, &CompileError{Msg: fmt.Sprintf("unknown SQL dialect %d", int(opts.Dialect))}
	}
	c := &compiler{src: src, opts: opts, pos: posMap{src: src}, slots: map[int]slot{}}
	st, err := c.compile()
	if err != nil {
		return nil, err // never a typed nil
	}
	return st, nil
}

func (c *compiler) compile() (*Statement, *CompileError) {
	tpls, lerr := scanTemplates(c.src)
	if lerr != nil {
		return nil, lerr.at(c.src, nil)
	}
	if err := c.expand(tpls); err != nil {
		return nil, err
	}
	toks, spans, lerr := lex(c.exp, c.opts.Dialect)
	if lerr != nil {
		return nil, lerr.at(c.exp, &c.pos)
	}
	if err := c.checkSpans(spans); err != nil {
		return nil, err
	}
	if err := c.checkTokens(toks); err != nil {
		return nil, err
	}
	if err := c.checkSafety(toks, spans); err != nil {
		return nil, err
	}
	return c.build(toks)
}

// canonical is how an input placeholder is written in the expanded text.
// It contains no quote, backslash, $, newline or comment marker, so it
// cannot change how the text around it is lexed, wherever it stands.
// An identity value's name is "auth.subject" or "auth.claims.a.b": it is
// written as itself.
func canonical(name string) string {
	if isAuth(name) {
		return "{{ " + name + " }}"
	}
	return "{{ inputs." + name + " }}"
}

// isAuth tells an identity value's slot name from an input's (input names
// have no dot).
func isAuth(name string) bool { return strings.HasPrefix(name, "auth.") }

// label names a slot in messages: input "x", or identity value auth.claims.x.
func label(name string) string {
	if isAuth(name) {
		return "identity value " + name
	}
	return fmt.Sprintf("input %q", name)
}

// expand substitutes env values and rewrites input placeholders in
// canonical form, recording where each piece came from.
func (c *compiler) expand(tpls []template) *CompileError {
	lookup := c.opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var b strings.Builder
	b.Grow(len(c.src))
	last := 0
	literal := func(end int) {
		if end > last {
			c.pos.segs = append(c.pos.segs, segment{exp: b.Len(), src: last})
			b.WriteString(c.src[last:end])
		}
	}
	for _, t := range tpls {
		literal(t.start)
		last = t.end
		if t.env {
			v, ok := lookup(t.name)
			if !ok {
				return errorAt(c.src, t.start, fmt.Sprintf("environment variable %q is not set", t.name))
			}
			if strings.Contains(v, "{{") {
				return errorAt(c.src, t.start, fmt.Sprintf("environment variable %q contains \"{{\": env values are substituted as text and may not contain templates", t.name))
			}
			c.pos.segs = append(c.pos.segs, segment{exp: b.Len(), src: t.start, env: t.name})
			b.WriteString(v)
			continue
		}
		if t.auth != "" {
			if err := c.authSlot(t); err != nil {
				return err
			}
		} else if _, ok := c.opts.Inputs[t.name]; !ok {
			return errorAt(c.src, t.start, c.unknownInput(t.name))
		}
		c.slots[b.Len()] = slot{name: t.name, ident: t.ident, src: t.start}
		c.pos.segs = append(c.pos.segs, segment{exp: b.Len(), src: t.start, slot: true})
		b.WriteString(canonical(t.name))
	}
	literal(len(c.src))
	c.exp = b.String()

	// An env value may end in "{" before a "{" of the text (or of another
	// value): the result would read as a template that nobody wrote.
	for i := 0; ; {
		k := strings.Index(c.exp[i:], "{{")
		if k < 0 {
			return nil
		}
		i += k
		if _, ok := c.slots[i]; !ok {
			return c.pos.errorAt(i, "an env value forms \"{{\" with the text next to it")
		}
		i += len("{{")
	}
}

// authSlot records an identity value and its default; two uses of one value
// must agree on the default, or a reader could not tell which applies.
func (c *compiler) authSlot(t template) *CompileError {
	ref := authRef{def: t.def, hasDef: t.hasDef}
	if t.auth != "subject" {
		ref.claim = strings.Split(strings.TrimPrefix(t.auth, "claims."), ".")
	}
	if prev, seen := c.auth[t.name]; seen {
		if prev.hasDef != ref.hasDef || prev.def != ref.def {
			return errorAt(c.src, t.start, fmt.Sprintf("%s is written with different defaults in one statement; give every use the same \"| default\" (or none)", t.name))
		}
		return nil
	}
	if c.auth == nil {
		c.auth = map[string]authRef{}
	}
	c.auth[t.name] = ref
	return nil
}

func (c *compiler) unknownInput(name string) string {
	if len(c.opts.Inputs) == 0 {
		return fmt.Sprintf("unknown input %q: the tool declares no inputs", name)
	}
	names := make([]string, 0, len(c.opts.Inputs))
	for n := range c.opts.Inputs {
		names = append(names, n)
	}
	slices.Sort(names)
	return fmt.Sprintf("unknown input %q (declared: %s)", name, strings.Join(names, ", "))
}

// checkSpans refuses an input placeholder inside a string, quoted
// identifier, dollar quote or comment: the database would see the template
// text there, not a parameter, and splicing the value in would be exactly
// the injection this package exists to prevent.
func (c *compiler) checkSpans(spans []span) *CompileError {
	offs := make([]int, 0, len(c.slots))
	for off := range c.slots {
		offs = append(offs, off)
	}
	slices.Sort(offs)
	for _, off := range offs {
		// spans are in text order and do not overlap.
		i := sort.Search(len(spans), func(i int) bool { return spans[i].end > off })
		if i < len(spans) && spans[i].start <= off {
			s := c.slots[off]
			return errorAt(c.src, s.src, c.insideMsg(s.name, spans[i].kind))
		}
	}
	return nil
}

func (c *compiler) insideMsg(name string, k spanKind) string {
	ph := canonical(name)
	switch k {
	case inString:
		if c.opts.Dialect == MySQL {
			return fmt.Sprintf("%s inside a string literal; write CONCAT('%%', %s, '%%')", label(name), ph)
		}
		return fmt.Sprintf("%s inside a string literal; write '%%' || %s || '%%'", label(name), ph)
	case inQuotedIdent:
		return fmt.Sprintf("%s inside a quoted identifier; an identifier can only come from an enum input written outside quotes: %s", label(name), ph)
	case inDollarQuote:
		return fmt.Sprintf("%s inside a dollar-quoted string; values are bound, never spliced into text: use %s outside the quotes", label(name), ph)
	}
	return fmt.Sprintf("%s inside a comment; move it out of the comment or remove it", label(name))
}

// checkTokens refuses parameter markers written in the text (they would
// shift the numbering of the inputs' parameters), inputs glued to a word,
// and an empty statement.
func (c *compiler) checkTokens(toks []Token) *CompileError {
	empty := true
	for _, t := range toks {
		switch t.Kind {
		case BindParam:
			return c.pos.errorAt(t.Offset, fmt.Sprintf("literal parameter %q in the statement; write {{ inputs.NAME }} instead (a literal parameter would shift the numbering of the bound inputs)", t.Text))
		case Placeholder:
			s := c.slots[t.Offset]
			end := t.Offset + len(t.Text)
			if t.Offset > 0 && isWordChar(c.exp[t.Offset-1]) {
				return errorAt(c.src, s.src, fmt.Sprintf("%s is glued to the word before it; an input is a whole value or identifier, never part of one: put a space or an operator between them", label(s.name)))
			}
			if end < len(c.exp) && isWordChar(c.exp[end]) {
				return errorAt(c.src, s.src, fmt.Sprintf("%s is glued to the word after it; an input is a whole value or identifier, never part of one: put a space or an operator between them", label(s.name)))
			}
		}
		if !t.IsPunct(";") {
			empty = false
		}
	}
	if empty {
		return errorAt(c.src, 0, "empty statement")
	}
	return nil
}
