package pipeline

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Prompt is a compiled prompt declared in the configuration (README,
// Prompts): prompts/list publishes it, prompts/get fills its message
// templates with the caller's arguments.
type Prompt struct {
	Name        string
	Title       string
	Description string
	Arguments   []PromptArgument
	Messages    []PromptMessage
	// Auth is who may list and get the prompt; nil: anyone.
	Auth Authorizer
}

// PromptArgument is one argument of a prompt. Enum, when set, is what
// completion/complete offers (and the only values accepted).
type PromptArgument struct {
	Name        string
	Description string
	Required    bool
	Enum        []string
}

// PromptMessage is one message template: a role and the text in pieces,
// literal text and argument references alternating.
type PromptMessage struct {
	Role  string // "user" or "assistant"
	parts []promptPart
}

type promptPart struct {
	text string // literal text, when arg is ""
	arg  string // the argument whose value goes here
}

// promptPlaceholder is one {{ ... }} of a message template: an argument
// reference or a quoted literal ({{ "{{" }} writes two braces).
var promptPlaceholder = regexp.MustCompile(`^\{\{\s*(?:arguments\.([A-Za-z_][A-Za-z0-9_-]*)|"([^"]*)")\s*\}\}`)

// CompilePromptMessage compiles a message template. Every "{{" starts a
// placeholder: {{ arguments.NAME }} for a declared argument, or
// {{ "text" }} for literal text (the way to write "{{"). Anything else is
// an error naming the offset, so that a typo fails the load rather than
// reaching the model verbatim.
func CompilePromptMessage(role, template string, args []PromptArgument) (PromptMessage, error) {
	m := PromptMessage{Role: role}
	if role != "user" && role != "assistant" {
		return m, fmt.Errorf("message role %q: want user or assistant", role)
	}
	var lit strings.Builder
	for rest := template; rest != ""; {
		i := strings.Index(rest, "{{")
		if i < 0 {
			lit.WriteString(rest)
			break
		}
		lit.WriteString(rest[:i])
		rest = rest[i:]
		at := len(template) - len(rest)
		sub := promptPlaceholder.FindStringSubmatch(rest)
		if sub == nil {
			end := min(len(rest), 40)
			return m, fmt.Errorf("message template at byte %d: %q is not {{ arguments.NAME }} or {{ \"literal\" }}", at, rest[:end])
		}
		rest = rest[len(sub[0]):]
		if sub[1] == "" { // quoted literal
			lit.WriteString(sub[2])
			continue
		}
		if !slices.ContainsFunc(args, func(a PromptArgument) bool { return a.Name == sub[1] }) {
			return m, fmt.Errorf("message template at byte %d: argument %q is not declared (declare it with argument %s)", at, sub[1], sub[1])
		}
		if lit.Len() > 0 {
			m.parts = append(m.parts, promptPart{text: lit.String()})
			lit.Reset()
		}
		m.parts = append(m.parts, promptPart{arg: sub[1]})
	}
	if lit.Len() > 0 {
		m.parts = append(m.parts, promptPart{text: lit.String()})
	}
	return m, nil
}

// RenderedMessage is a message with its arguments filled in.
type RenderedMessage struct {
	Role string
	Text string
}

// Render fills the templates in one pass: a value is inserted as it is and
// never read as a template again, so an argument holding "{{ ... }}" stays
// that text. A missing required argument, an undeclared one, or a value
// outside an argument's enum is a validation failure.
func (p *Prompt) Render(args map[string]string) ([]RenderedMessage, error) {
	for name := range args {
		if !slices.ContainsFunc(p.Arguments, func(a PromptArgument) bool { return a.Name == name }) {
			return nil, Fail(StageValidation, nil, "unknown argument %q", name)
		}
	}
	for _, a := range p.Arguments {
		v, ok := args[a.Name]
		if a.Required && !ok {
			return nil, Fail(StageValidation, nil, "missing required argument %q", a.Name)
		}
		if ok && len(a.Enum) > 0 && !slices.Contains(a.Enum, v) {
			return nil, Fail(StageValidation, nil, "argument %q: %q is not one of %s", a.Name, v, strings.Join(a.Enum, ", "))
		}
	}
	out := make([]RenderedMessage, len(p.Messages))
	for i, m := range p.Messages {
		var b strings.Builder
		for _, part := range m.parts {
			if part.arg != "" {
				b.WriteString(args[part.arg])
			} else {
				b.WriteString(part.text)
			}
		}
		out[i] = RenderedMessage{Role: m.Role, Text: b.String()}
	}
	return out, nil
}

// Complete is completion/complete for one argument: the enum values that
// start with prefix (case-insensitively), in declaration order.
func (a PromptArgument) Complete(prefix string) []string {
	return CompleteEnum(a.Enum, prefix)
}

// CompleteEnum returns the values of enum that start with prefix, ignoring
// case, at most 100 (the protocol's limit for one answer).
func CompleteEnum(enum []string, prefix string) []string {
	out := []string{}
	p := strings.ToLower(prefix)
	for _, v := range enum {
		if strings.HasPrefix(strings.ToLower(v), p) {
			out = append(out, v)
			if len(out) == 100 {
				break
			}
		}
	}
	return out
}
