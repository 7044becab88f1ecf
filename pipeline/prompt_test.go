package pipeline

import (
	"slices"
	"strings"
	"testing"
)

func TestCompilePromptMessage(t *testing.T) {
	args := []PromptArgument{{Name: "a"}, {Name: "b-c"}}
	for _, tc := range []struct {
		template, err string
		want          string // rendered with a=1, b-c=2
	}{
		{"plain", "", "plain"},
		{"x {{ arguments.a }} y {{arguments.b-c}}", "", "x 1 y 2"},
		{`{{ "{{" }} arguments.a }}`, "", "{{ arguments.a }}"},
		{"{{ arguments.z }}", `argument "z" is not declared`, ""},
		{"{{ inputs.a }}", `is not {{ arguments.NAME }}`, ""},
		{"open {{ arguments.a", `is not {{ arguments.NAME }}`, ""},
		{"a } b }} c", "", "a } b }} c"},
	} {
		m, err := CompilePromptMessage("user", tc.template, args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.template, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.template, err)
			continue
		}
		p := &Prompt{Arguments: args, Messages: []PromptMessage{m}}
		out, err := p.Render(map[string]string{"a": "1", "b-c": "2"})
		if err != nil || out[0].Text != tc.want {
			t.Errorf("%q: rendered %+v %v, want %q", tc.template, out, err, tc.want)
		}
	}
	if _, err := CompilePromptMessage("system", "x", nil); err == nil {
		t.Error("role system accepted")
	}
}

func TestPromptRender(t *testing.T) {
	args := []PromptArgument{{Name: "q", Required: true}, {Name: "tone", Enum: []string{"calm", "curt"}}}
	m, err := CompilePromptMessage("assistant", "[{{ arguments.q }}|{{ arguments.tone }}]", args)
	if err != nil {
		t.Fatal(err)
	}
	p := &Prompt{Arguments: args, Messages: []PromptMessage{m}}
	for _, tc := range []struct {
		args map[string]string
		want string
		err  string
	}{
		{map[string]string{"q": "{{ arguments.tone }}", "tone": "calm"}, "[{{ arguments.tone }}|calm]", ""},
		{map[string]string{"q": "x"}, "[x|]", ""},
		{map[string]string{}, "", `missing required argument "q"`},
		{map[string]string{"q": "x", "tone": "loud"}, "", `"loud" is not one of calm, curt`},
		{map[string]string{"q": "x", "other": "y"}, "", `unknown argument "other"`},
	} {
		out, err := p.Render(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || len(out) != 1 || out[0].Text != tc.want || out[0].Role != "assistant" {
			t.Errorf("%v: %+v %v, want %q", tc.args, out, err, tc.want)
		}
	}
}

func TestCompleteEnum(t *testing.T) {
	enum := []string{"Guide", "glossary", "reference"}
	for prefix, want := range map[string][]string{"": enum, "g": {"Guide", "glossary"}, "GL": {"glossary"}, "x": {}} {
		if got := CompleteEnum(enum, prefix); !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", prefix, got, want)
		}
	}
}
