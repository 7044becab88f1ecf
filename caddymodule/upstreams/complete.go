package upstreams

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// errUnknownRef is completion/complete for a prompt or template that does
// not exist, or that the caller may not use.
var errUnknownRef = errors.New("no such prompt or resource template")

// Completers are mcp-go's completion providers: a declared prompt's or
// template's enum values, a source's forwarded to its server.
func (r *Set) Completers() (server.PromptCompletionProvider, server.ResourceCompletionProvider) {
	return promptCompleter{r}, resourceCompleter{r}
}

type promptCompleter struct{ r *Set }

// CompletePromptArgument offers the argument's enum values that start with
// what the user typed.
func (c promptCompleter) CompletePromptArgument(ctx context.Context, name string, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	if !c.r.Prompts.Declared(name) {
		if ref, ok := c.r.cur.Load().promptOrigin[name]; ok {
			return c.r.forwardComplete(ctx, ref.src, map[string]any{"type": "ref/prompt", "name": ref.original}, arg, cctx)
		}
	}
	values, ok := c.r.Prompts.Complete(ctx, name, arg.Name, arg.Value)
	if !ok {
		return nil, errUnknownRef
	}
	return completion(values), nil
}

type resourceCompleter struct{ r *Set }

// CompleteResourceArgument offers the template variable's enum values.
func (c resourceCompleter) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	if src, ok := c.r.cur.Load().templateOrigin[uri]; ok {
		return c.r.forwardComplete(ctx, src, map[string]any{"type": "ref/resource", "uri": uri}, arg, cctx)
	}
	values, ok := c.r.Resources.Complete(ctx, uri, arg.Name, arg.Value)
	if !ok {
		return nil, errUnknownRef
	}
	return completion(values), nil
}

func completion(values []string) *mcp.Completion {
	if values == nil {
		values = []string{}
	}
	return &mcp.Completion{Values: values, Total: len(values)}
}
