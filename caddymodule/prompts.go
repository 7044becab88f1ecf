package caddymodule

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

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

// parsePrompt reads `prompt <name> { ... }`; the templates are compiled
// here too, so that `caddy adapt` names the line of a bad one.
func parsePrompt(d *caddyfile.Dispenser) (PromptConfig, error) {
	var p PromptConfig
	if !d.NextArg() {
		return p, d.Errf("usage: prompt <name> { description ...; argument ...; message user|assistant \"...\" }")
	}
	p.Name = d.Val()
	if d.NextArg() {
		return p, d.ArgErr()
	}
	if !pipeline.ToolNamePattern.MatchString(p.Name) {
		return p, d.Errf("prompt %q: name must match %s", p.Name, pipeline.ToolNamePattern)
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch sub := d.Val(); sub {
		case "description":
			if err := oneArg(d, &p.Description); err != nil {
				return p, err
			}
		case "title":
			if err := oneArg(d, &p.Title); err != nil {
				return p, err
			}
		case "argument":
			a, err := parsePromptArgument(d, p.Name)
			if err != nil {
				return p, err
			}
			for _, other := range p.Arguments {
				if other.Name == a.Name {
					return p, d.Errf("prompt %q: argument %q declared twice", p.Name, a.Name)
				}
			}
			p.Arguments = append(p.Arguments, a)
		case "message":
			args := d.RemainingArgs()
			if len(args) != 2 {
				return p, d.Errf("prompt %q: usage: message user|assistant \"<template>\"", p.Name)
			}
			m := PromptMessageConfig{Role: args[0], Template: args[1]}
			if _, err := pipeline.CompilePromptMessage(m.Role, m.Template, promptArguments(p.Arguments)); err != nil {
				return p, d.Errf("prompt %q: %v", p.Name, err)
			}
			p.Messages = append(p.Messages, m)
		case "auth":
			a, err := parseToolAuth(d, p.Name)
			if err != nil {
				return p, fmt.Errorf("prompt%s", strings.TrimPrefix(err.Error(), "tool"))
			}
			p.Auth = a
		default:
			return p, d.Errf("prompt %q: unrecognized sub-directive %q (want description, title, argument, message, auth)", p.Name, sub)
		}
	}
	if len(p.Messages) == 0 {
		return p, d.Errf("prompt %q: no message (add message user \"...\")", p.Name)
	}
	return p, nil
}

// promptArgName is what an argument may be called: a template writes it
// as {{ arguments.NAME }}.
var promptArgName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

// parsePromptArgument reads
// `argument <name> [required] [enum a|b|c] ["description"]`.
func parsePromptArgument(d *caddyfile.Dispenser, prompt string) (PromptArgumentConfig, error) {
	var a PromptArgumentConfig
	if !d.NextArg() {
		return a, d.Errf("prompt %q: usage: argument <name> [required] [enum a|b|c] [\"description\"]", prompt)
	}
	a.Name = d.Val()
	if !promptArgName.MatchString(a.Name) {
		return a, d.Errf("prompt %q: argument %q: name must match %s", prompt, a.Name, promptArgName)
	}
	described := false
	for d.NextArg() {
		switch v := d.Val(); {
		case v == "required" && !described:
			a.Required = true
		case v == "enum" && !described:
			if !d.NextArg() || d.Val() == "" {
				return a, d.Errf("prompt %q: argument %q: enum needs values a|b|c", prompt, a.Name)
			}
			a.Enum = strings.Split(d.Val(), "|")
		case described:
			return a, d.Errf("prompt %q: argument %q: unexpected %q (the description is already %q)", prompt, a.Name, v, a.Description)
		default:
			a.Description, described = v, true
		}
	}
	if d.NextBlock(d.Nesting()) {
		return a, d.Errf("prompt %q: argument %q takes no block", prompt, a.Name)
	}
	return a, nil
}

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
