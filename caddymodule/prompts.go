package caddymodule

import (
	"fmt"
	"regexp"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/caddymodule/prompts"
	"github.com/edgemcp/edgemcp/pipeline"
)

// Prompts declared in the Caddyfile (README, Prompts): message templates
// filled with the caller's arguments, served through mcp-go's prompts/list
// and prompts/get, under the same auth policies as tools.

// PromptConfig is `prompt <name> { ... }`.
type PromptConfig struct {
	Name        string                 `json:"name"`
	Title       string                 `json:"title,omitempty"`
	Description string                 `json:"description,omitempty"`
	Arguments   []PromptArgumentConfig `json:"arguments,omitempty"`
	Messages    []PromptMessageConfig  `json:"messages"`
	// Auth replaces default_auth for this prompt, as a tool's does.
	Auth *AuthPolicyConfig `json:"auth,omitempty"`
}

// PromptArgumentConfig is `argument <name> [required] [enum a|b|c] ["description"]`.
type PromptArgumentConfig struct {
	Name        string   `json:"name"`
	Required    bool     `json:"required,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Description string   `json:"description,omitempty"`
}

// PromptMessageConfig is `message user|assistant "<template>"`.
type PromptMessageConfig struct {
	Role     string `json:"role"`
	Template string `json:"template"`
}

// promptArgName is what an argument may be called: a template writes it
// as {{ arguments.NAME }}.
var promptArgName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

func promptArguments(in []PromptArgumentConfig) []pipeline.PromptArgument {
	out := make([]pipeline.PromptArgument, len(in))
	for i, a := range in {
		out[i] = pipeline.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required, Enum: a.Enum}
	}
	return out
}

// buildPrompts compiles the declared prompts with their auth checks.
// Descriptions take Caddy placeholders ({env.X}) like a tool's; message
// templates do not, so that "{" in a prompt is always the operator's text.
func (h *Handler) buildPrompts(repl *caddy.Replacer) ([]*pipeline.Prompt, error) {
	out := make([]*pipeline.Prompt, 0, len(h.Prompts))
	seen := map[string]bool{}
	for _, pc := range h.Prompts {
		if seen[pc.Name] {
			return nil, fmt.Errorf("prompt %q declared twice", pc.Name)
		}
		seen[pc.Name] = true
		p := &pipeline.Prompt{
			Name:        pc.Name,
			Title:       repl.ReplaceKnown(pc.Title, ""),
			Description: repl.ReplaceKnown(pc.Description, ""),
			Arguments:   promptArguments(pc.Arguments),
		}
		if len(pc.Messages) == 0 {
			return nil, fmt.Errorf("prompt %q: no message", pc.Name)
		}
		for _, mc := range pc.Messages {
			m, err := pipeline.CompilePromptMessage(mc.Role, mc.Template, p.Arguments)
			if err != nil {
				return nil, fmt.Errorf("prompt %q: %v", pc.Name, err)
			}
			p.Messages = append(p.Messages, m)
		}
		auth, err := h.policyAuth(pc.Auth, fmt.Sprintf("prompt %q", pc.Name))
		if err != nil {
			return nil, err
		}
		p.Auth = auth
		out = append(out, p)
	}
	return out, nil
}

// policyAuth is the auth check of a prompt or resource: its own auth block,
// which replaces the endpoint default, else the default, else none.
func (h *Handler) policyAuth(p *AuthPolicyConfig, where string) (pipeline.Authorizer, error) {
	if p != nil {
		return h.authCheck(p, where)
	}
	if h.defaultAuth != nil {
		return h.defaultAuth, nil
	}
	return nil, nil
}

// provisionPrompts compiles the prompts and indexes them by name.
func (h *Handler) provisionPrompts(repl *caddy.Replacer) error {
	list, err := h.buildPrompts(repl)
	if err != nil {
		return err
	}
	h.prompts = prompts.New(list, requestAccess{h})
	return nil
}
