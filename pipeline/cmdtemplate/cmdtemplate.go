// Package cmdtemplate compiles command statements (the redis connector's
// `statement HGETALL user:{{ inputs.id }}`) into a fixed list of arguments.
//
// The statement is split into arguments once, at load, the way redis-cli
// splits a line: whitespace separates arguments, "double quotes" (with \"
// \\ \n \r \t \xHH escapes) and 'single quotes' (with \' only) group text
// containing spaces. An {{ inputs.x }} placeholder is part of the argument
// it is written in: at call time its value is substituted inside that one
// argument and never split again, so a value with spaces, quotes or
// newlines is still one argument and can never become a second argument,
// let alone a second command. {{ env.X }} is substituted at load, also
// inside its own argument.
package cmdtemplate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// Options are the compile-time facts about a statement.
type Options struct {
	// Inputs are the tool's declared input names.
	Inputs map[string]bool
	// LookupEnv reads {{ env.X }} (os.LookupEnv in production).
	LookupEnv func(string) (string, bool)
}

// Command is a compiled command statement. It is immutable and safe for
// concurrent use.
type Command struct {
	args []arg
	// auth are the identity values ({{ auth.subject }},
	// {{ auth.claims.x }}) the command uses, by name, with their defaults.
	auth map[string]sqltemplate.Template
}

// arg is one argument: literal text and input placeholders, in order.
type arg struct {
	parts []part
}

type part struct {
	text  string // literal text, when input == ""
	input string
}

// scriptCommands take code (a Lua script or a function name) as their
// first argument: an input there would be code injection, so it must be
// literal.
var scriptCommands = map[string]bool{
	"EVAL": true, "EVAL_RO": true, "EVALSHA": true, "EVALSHA_RO": true, "FCALL": true, "FCALL_RO": true,
}

// codeSubcommands are the subcommands that take code (a Lua script, a
// function library, or a serialized one) in every argument after them:
// those must be literal too. The subcommand of SCRIPT and FUNCTION itself
// must be literal, or an input could turn EXISTS into LOAD.
var codeSubcommands = map[string]map[string]bool{
	"SCRIPT":   {"LOAD": true},
	"FUNCTION": {"LOAD": true, "RESTORE": true},
}

// Compile splits src into arguments and resolves its templates.
func Compile(src string, opt Options) (*Command, error) {
	temps, err := sqltemplate.ScanTemplates(src)
	if err != nil {
		return nil, err
	}
	at := make(map[int]sqltemplate.Template, len(temps))
	for _, t := range temps {
		at[t.Start] = t
	}
	c := &Command{}
	var cur *arg
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			cur.parts = append(cur.parts, part{text: lit.String()})
			lit.Reset()
		}
	}
	start := func() {
		if cur == nil {
			c.args = append(c.args, arg{})
			cur = &c.args[len(c.args)-1]
		}
	}
	var quote byte // 0, '"' or '\''
	quoteAt := 0
	for i := 0; i < len(src); {
		if t, ok := at[i]; ok {
			start()
			if t.Ident {
				return nil, sqltemplate.ErrorAt(src, i, `"| ident" is for SQL identifiers; a command argument takes the value as is`)
			}
			if t.Env {
				v, ok := opt.LookupEnv(t.Name)
				if !ok {
					return nil, sqltemplate.ErrorAt(src, i, fmt.Sprintf("environment variable %s is not set", t.Name))
				}
				lit.WriteString(v)
			} else if t.Auth {
				if prev, seen := c.auth[t.Name]; seen && (prev.HasDefault != t.HasDefault || prev.Default != t.Default) {
					return nil, sqltemplate.ErrorAt(src, i, fmt.Sprintf("%s is written with different defaults in one statement; give every use the same \"| default\" (or none)", t.Name))
				}
				if c.auth == nil {
					c.auth = map[string]sqltemplate.Template{}
				}
				c.auth[t.Name] = t
				flush()
				cur.parts = append(cur.parts, part{input: t.Name})
			} else {
				if !opt.Inputs[t.Name] {
					return nil, sqltemplate.ErrorAt(src, i, fmt.Sprintf("no input named %q is declared", t.Name))
				}
				flush()
				cur.parts = append(cur.parts, part{input: t.Name})
			}
			i = t.End
			continue
		}
		ch := src[i]
		switch {
		case quote == 0 && isSpace(ch):
			if cur != nil {
				flush()
				cur = nil
			}
			i++
		case quote == 0 && (ch == '"' || ch == '\''):
			start()
			quote, quoteAt = ch, i
			i++
		case quote != 0 && ch == quote:
			quote = 0
			i++
			if i < len(src) && !isSpace(src[i]) {
				return nil, sqltemplate.ErrorAt(src, i, "a closing quote must be followed by a space or the end")
			}
		case quote == '"' && ch == '\\':
			n, w, ok := escape(src[i:])
			if !ok {
				return nil, sqltemplate.ErrorAt(src, i, `unknown escape in "..." (use \" \\ \n \r \t \xHH)`)
			}
			lit.WriteString(n)
			i += w
		case quote == '\'' && ch == '\\' && i+1 < len(src) && src[i+1] == '\'':
			lit.WriteByte('\'')
			i += 2
		default:
			start()
			lit.WriteByte(ch)
			i++
		}
	}
	if quote != 0 {
		return nil, sqltemplate.ErrorAt(src, quoteAt, "unterminated quoted argument")
	}
	if cur != nil {
		flush()
	}
	return c, c.check(src)
}

// check applies the rules that make a command's identity fixed at load.
func (c *Command) check(src string) error {
	if len(c.args) == 0 {
		return sqltemplate.ErrorAt(src, 0, "empty command")
	}
	name, ok := c.Literal(0)
	if !ok {
		return sqltemplate.ErrorAt(src, 0, "the command name must be literal text, not an input")
	}
	if name == "" {
		return sqltemplate.ErrorAt(src, 0, "empty command name")
	}
	if scriptCommands[strings.ToUpper(name)] && len(c.args) > 1 {
		if _, ok := c.Literal(1); !ok {
			return sqltemplate.ErrorAt(src, 0, fmt.Sprintf("the script or function of %s must be literal text, not an input", strings.ToUpper(name)))
		}
	}
	if subs, ok := codeSubcommands[strings.ToUpper(name)]; ok && len(c.args) > 1 {
		sub, ok := c.Literal(1)
		if !ok {
			return sqltemplate.ErrorAt(src, 0, fmt.Sprintf("the subcommand of %s must be literal text, not an input", strings.ToUpper(name)))
		}
		if subs[strings.ToUpper(sub)] {
			for i := 2; i < len(c.args); i++ {
				if _, ok := c.Literal(i); !ok {
					return sqltemplate.ErrorAt(src, 0, fmt.Sprintf("the code of %s %s must be literal text, not an input", strings.ToUpper(name), strings.ToUpper(sub)))
				}
			}
		}
	}
	return nil
}

// Len is the number of arguments, command name included.
func (c *Command) Len() int { return len(c.args) }

// Text is the command for telemetry: its name, then "?" for every further
// argument, as OpenTelemetry's Redis conventions sanitize it. Literal
// arguments are left out too: {{ env.X }} may have put a secret there.
func (c *Command) Text() string {
	if len(c.args) == 0 {
		return ""
	}
	return c.Name() + strings.Repeat(" ?", len(c.args)-1)
}

// Literal returns argument i when it holds no input.
func (c *Command) Literal(i int) (string, bool) {
	if i >= len(c.args) {
		return "", false
	}
	var b strings.Builder
	for _, p := range c.args[i].parts {
		if p.input != "" {
			return "", false
		}
		b.WriteString(p.text)
	}
	return b.String(), true
}

// Name is the command name in upper case.
func (c *Command) Name() string {
	n, _ := c.Literal(0)
	return strings.ToUpper(n)
}

// IdentityValues lists the identity values the command uses
// (auth.subject, auth.claims.x), sorted; nil when none.
func (c *Command) IdentityValues() []string {
	if c == nil || len(c.auth) == 0 {
		return nil
	}
	out := make([]string, 0, len(c.auth))
	for n := range c.auth {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Render builds the arguments of one call from validated input values.
func (c *Command) Render(inputs map[string]any) ([]string, error) {
	return c.RenderAs(inputs, nil)
}

// RenderAs is Render for a call made by id: identity values come from id
// only, each inside its own argument like an input. A value id lacks,
// without a "| default", is a *sqltemplate.MissingIdentityError.
func (c *Command) RenderAs(inputs map[string]any, id *sqltemplate.Identity) ([]string, error) {
	out := make([]string, len(c.args))
	for i, a := range c.args {
		var b strings.Builder
		for _, p := range a.parts {
			if p.input == "" {
				b.WriteString(p.text)
				continue
			}
			v := inputs[p.input]
			if t, ok := c.auth[p.input]; ok {
				var found bool
				if v, found = id.Lookup(p.input); !found {
					if !t.HasDefault {
						return nil, &sqltemplate.MissingIdentityError{Name: p.input}
					}
					v = t.Default
				}
			}
			s, err := format(v)
			if err != nil {
				return nil, fmt.Errorf("input %q: %v", p.input, err)
			}
			b.WriteString(s)
		}
		out[i] = b.String()
	}
	return out, nil
}

// format writes a validated input value as argument text: strings as they
// are, numbers in decimal, booleans as 1/0 (Redis' own convention),
// datetimes as RFC 3339 in UTC, arrays and objects as JSON.
func format(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", fmt.Errorf("no value (a command argument cannot be null: make the input required or give it a default)")
	case string:
		return v, nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	case bool:
		if v {
			return "1", nil
		}
		return "0", nil
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano), nil
	case fmt.Stringer: // *big.Int and similar exact numbers
		return v.String(), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// escape reads a backslash escape at the start of s: the text it stands
// for and its width.
func escape(s string) (string, int, bool) {
	if len(s) < 2 {
		return "", 0, false
	}
	switch s[1] {
	case '"', '\\':
		return s[1:2], 2, true
	case 'n':
		return "\n", 2, true
	case 'r':
		return "\r", 2, true
	case 't':
		return "\t", 2, true
	case 'x':
		if len(s) >= 4 {
			if n, err := strconv.ParseUint(s[2:4], 16, 8); err == nil {
				return string([]byte{byte(n)}), 4, true
			}
		}
	}
	return "", 0, false
}
