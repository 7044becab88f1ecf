package pipeline

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// Input is one declared input of a tool:
// `input <name> <type> [required] [default <v>] [enum a|b|c] ["description"]`.
type Input struct {
	Name        string
	Type        Type
	Required    bool
	Default     any // coerced default; meaningful when HasDefault
	HasDefault  bool
	Enum        []any // coerced allow-list; empty when not an enum
	EnumText    []string
	Description string
}

var inputName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// InputSpec is an input as written in the configuration, before parsing.
type InputSpec struct {
	Name        string
	Type        string
	Required    bool
	Default     *string // as written; nil when absent
	Enum        []string
	Description string
}

// NewInput parses and checks an InputSpec: a bad type, a default or enum
// value that does not fit the type, or a default outside the enum are
// configuration errors.
func NewInput(s InputSpec) (*Input, error) {
	if !inputName.MatchString(s.Name) {
		return nil, fmt.Errorf("input %q: name must match %s", s.Name, inputName)
	}
	t, err := ParseType(s.Type)
	if err != nil {
		return nil, fmt.Errorf("input %q: %v", s.Name, err)
	}
	in := &Input{Name: s.Name, Type: t, Required: s.Required, Description: s.Description}
	if len(s.Enum) > 0 {
		if t.Kind == KindArray || t.Kind == KindObject {
			return nil, fmt.Errorf("input %q: enum is only allowed on scalar types", s.Name)
		}
		for _, e := range s.Enum {
			v, err := parseLiteral(t, e)
			if err != nil {
				return nil, fmt.Errorf("input %q: enum value %q: %v", s.Name, e, err)
			}
			in.Enum = append(in.Enum, v)
		}
		in.EnumText = slices.Clone(s.Enum)
	}
	if s.Default != nil {
		if s.Required {
			return nil, fmt.Errorf("input %q: an input cannot be both required and have a default", s.Name)
		}
		v, err := parseLiteral(t, *s.Default)
		if err != nil {
			return nil, fmt.Errorf("input %q: default %q: %v", s.Name, *s.Default, err)
		}
		if err := in.checkEnum(v); err != nil {
			return nil, fmt.Errorf("input %q: default: %v", s.Name, err)
		}
		in.Default, in.HasDefault = v, true
	}
	return in, nil
}

// parseLiteral reads a configured literal: verbatim for strings, JSON for
// everything else (numbers, true/false, arrays, objects), an RFC 3339 string
// for datetimes.
func parseLiteral(t Type, text string) (any, error) {
	if t.Kind == KindString || t.Kind == KindDatetime {
		return coerce(t, text)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, fmt.Errorf("not a valid %s literal", t.jsonTypeName())
	}
	return coerce(t, v)
}

func (in *Input) checkEnum(v any) error {
	if len(in.Enum) == 0 {
		return nil
	}
	for _, e := range in.Enum {
		if equalScalar(e, v) {
			return nil
		}
	}
	return fmt.Errorf("expected one of %s, got %s", strings.Join(in.EnumText, ", "), describe(jsonish(v)))
}

func equalScalar(a, b any) bool {
	if ta, ok := a.(time.Time); ok {
		tb, ok := b.(time.Time)
		return ok && ta.Equal(tb)
	}
	return a == b
}

// jsonish turns coerced values back into what describe() understands.
func jsonish(v any) any {
	switch x := v.(type) {
	case int64:
		return x
	case fmt.Stringer:
		return x.String()
	}
	return v
}

// InputSet is the ordered set of a tool's declared inputs.
type InputSet struct {
	list   []*Input
	byName map[string]*Input
}

// NewInputSet checks names are unique.
func NewInputSet(inputs []*Input) (*InputSet, error) {
	s := &InputSet{byName: make(map[string]*Input, len(inputs))}
	for _, in := range inputs {
		if _, dup := s.byName[in.Name]; dup {
			return nil, fmt.Errorf("input %q declared twice", in.Name)
		}
		s.byName[in.Name] = in
		s.list = append(s.list, in)
	}
	return s, nil
}

func (s *InputSet) List() []*Input         { return s.list }
func (s *InputSet) Get(name string) *Input { return s.byName[name] }

// Validate checks and coerces call arguments against the declared inputs:
// unknown names, missing required inputs, type mismatches and values outside
// an enum are errors; absent optional inputs take their default (or nil,
// bound as SQL NULL). The returned map holds every declared input. All
// problems are reported together, sorted, so a caller can fix them at once.
func (s *InputSet) Validate(args map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(s.list))
	var problems []string
	known := 0 // arguments that name an input
	for _, in := range s.list {
		v, present := args[in.Name]
		if present {
			known++
		}
		if !present || v == nil {
			switch {
			case in.HasDefault:
				out[in.Name] = in.Default
			case in.Required:
				problems = append(problems, fmt.Sprintf("input %q: required", in.Name))
			default:
				out[in.Name] = nil
			}
			continue
		}
		c, err := coerce(in.Type, v)
		if err == nil {
			err = in.checkEnum(c)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("input %q%s", in.Name, prefixColon(err.Error())))
			continue
		}
		out[in.Name] = c
	}
	if known < len(args) {
		// Some argument names no input. Only then are the arguments
		// walked: a map's iteration costs more than the lookups above.
		for name := range args {
			if _, ok := s.byName[name]; !ok {
				problems = append(problems, fmt.Sprintf("input %q: unknown input", name))
			}
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return out, nil
}

// prefixColon joins `input "x"` with either ": msg" or "[2]: msg".
func prefixColon(msg string) string {
	if strings.HasPrefix(msg, "[") {
		return msg
	}
	return ": " + msg
}
