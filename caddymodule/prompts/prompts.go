// Package prompts serves the prompts declared in the Caddyfile: message
// templates (compiled by the shell into pipeline.Prompt) filled with the
// caller's arguments, through mcp-go's prompts/list and prompts/get, under
// the same auth policies as tools.
package prompts

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Access is what the shell knows of the request being served.
type Access interface {
	// Allowed reports whether the caller passes auth (nil: anyone).
	Allowed(ctx context.Context, auth pipeline.Authorizer, name string) bool
	// Fail puts perr on the request's call state, so that the wire
	// answer carries its code.
	Fail(ctx context.Context, perr *pipeline.Error)
}

// Set is the declared prompts, by name.
type Set struct {
	list   []*pipeline.Prompt
	byName map[string]*pipeline.Prompt
	access Access
}

// New indexes the prompts by name.
func New(list []*pipeline.Prompt, access Access) *Set {
	s := &Set{list: list, byName: make(map[string]*pipeline.Prompt, len(list)), access: access}
	for _, p := range list {
		s.byName[p.Name] = p
	}
	return s
}

// All are the prompts in their declared order (none in a nil Set: a
// handler not provisioned).
func (s *Set) All() []*pipeline.Prompt {
	if s == nil {
		return nil
	}
	return s.list
}

// Readable reports whether the caller of ctx may get p.
func (s *Set) Readable(ctx context.Context, p *pipeline.Prompt) bool {
	return s.access.Allowed(ctx, p.Auth, p.Name)
}

// Entry is the prompts/list entry of a prompt.
func Entry(p *pipeline.Prompt) mcp.Prompt {
	out := mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
	for _, a := range p.Arguments {
		out.Arguments = append(out.Arguments, mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
	}
	return out
}

// ServerEntries are the mcp-go entries of the prompts.
func (s *Set) ServerEntries() []server.ServerPrompt {
	out := make([]server.ServerPrompt, 0, len(s.All()))
	for _, p := range s.All() {
		out = append(out, server.ServerPrompt{Prompt: Entry(p), Handler: s.getter(p)})
	}
	return out
}

// getter renders a prompt. mcp-go has run Filter first, so a caller the
// policy refuses got "prompt not found" and never reaches it.
func (s *Set) getter(p *pipeline.Prompt) server.PromptHandlerFunc {
	return func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		msgs, err := p.Render(req.Params.Arguments)
		if err != nil {
			if perr, ok := err.(*pipeline.Error); ok {
				s.access.Fail(ctx, &pipeline.Error{Code: mcp.INVALID_PARAMS, Stage: perr.Stage, Message: perr.Message})
			}
			return nil, err
		}
		res := &mcp.GetPromptResult{Description: p.Description, Messages: make([]mcp.PromptMessage, len(msgs))}
		for i, m := range msgs {
			res.Messages[i] = mcp.NewPromptMessage(mcp.Role(m.Role), mcp.NewTextContent(m.Text))
		}
		return res, nil
	}
}

// Filter shows a caller only the prompts its identity passes, in
// prompts/list and (mcp-go applies it there too) prompts/get; a prompt not
// declared here (a source's) is not this set's to refuse.
func (s *Set) Filter(ctx context.Context, prompts []mcp.Prompt) []mcp.Prompt {
	out := prompts[:0:0]
	for _, mp := range prompts {
		if p := s.byName[mp.Name]; p == nil || s.Readable(ctx, p) {
			out = append(out, mp)
		}
	}
	return out
}

// Declared reports whether name is a declared prompt.
func (s *Set) Declared(name string) bool {
	_, ok := s.byName[name]
	return ok
}

// Completable: some prompt has an argument to complete.
func (s *Set) Completable() bool {
	for _, p := range s.All() {
		if len(p.Arguments) > 0 {
			return true
		}
	}
	return false
}

// Complete offers the enum values of the prompt name's argument arg that
// start with value; ok is false for a prompt that does not exist or that
// the caller may not get.
func (s *Set) Complete(ctx context.Context, name, arg, value string) (values []string, ok bool) {
	p := s.byName[name]
	if p == nil || !s.Readable(ctx, p) {
		return nil, false
	}
	for _, a := range p.Arguments {
		if a.Name == arg {
			return a.Complete(value), true
		}
	}
	return nil, true
}
