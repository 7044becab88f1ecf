package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/caddymodule/prompts"
)

// How declared resources and prompts meet mcp-go: the server options that
// declare their capabilities (only when there are any), filter them per
// caller and complete their arguments, and the call state that lets
// fastpath.Writer put the documented error code on a failed read or get.

// provisionPrompts compiles the prompts and indexes them by name.
func (h *Handler) provisionPrompts(repl *caddy.Replacer) error {
	list, err := h.buildPrompts(repl)
	if err != nil {
		return err
	}
	h.prompts = prompts.New(list, requestAccess{h})
	return nil
}

// resourcePromptOptions are the mcp-go options for the declared resources
// and prompts.
func (h *Handler) resourcePromptOptions() []server.ServerOption {
	opts := []server.ServerOption{
		server.WithPromptFilter(h.prompts.Filter),
	}
	// A source's lists change with its upstream's (upstream_catalog.go).
	changing := len(h.catalogSources()) > 0
	if h.servesResources() {
		opts = append(opts, server.WithResourceCapabilities(h.subscribable(), changing)) // subscribe.go
	}
	if h.servesPrompts() {
		opts = append(opts, server.WithPromptCapabilities(changing))
	}
	if h.completable() {
		opts = append(opts, server.WithCompletions(),
			server.WithPromptCompletionProvider(promptCompleter{h}),
			server.WithResourceCompletionProvider(resourceCompleter{h}))
	}
	return opts
}

// servesResources: resources are declared, or a source may bring some.
func (h *Handler) servesResources() bool {
	return len(h.resources.All()) > 0 || len(h.catalogSources()) > 0
}

// servesPrompts: prompts are declared, or a source may bring some.
func (h *Handler) servesPrompts() bool {
	return len(h.prompts.All()) > 0 || len(h.catalogSources()) > 0
}

// addResourcesAndPrompts registers the declared resources and prompts and
// the sources' (upstream_catalog.go); registering is what declares the
// capability in mcp-go, so nothing is registered where nothing is served.
func (h *Handler) addResourcesAndPrompts(srv *server.MCPServer) {
	h.setCatalog(srv, h.upstream.p.Load())
}

// completable: some prompt has an argument or some template a variable,
// or a source may have them (its completions are forwarded).
func (h *Handler) completable() bool {
	if len(h.catalogSources()) > 0 {
		return true
	}
	return h.prompts.Completable() || h.resources.Completable()
}

// errUnknownRef is completion/complete for a prompt or template that does
// not exist, or that the caller may not use.
var errUnknownRef = errors.New("no such prompt or resource template")

type promptCompleter struct{ h *Handler }

// CompletePromptArgument offers the argument's enum values that start with
// what the user typed.
func (c promptCompleter) CompletePromptArgument(ctx context.Context, name string, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	if !c.h.prompts.Declared(name) {
		if ref, ok := c.h.upstream.p.Load().promptOrigin[name]; ok {
			return c.h.forwardComplete(ctx, ref.src, map[string]any{"type": "ref/prompt", "name": ref.original}, arg, cctx)
		}
	}
	values, ok := c.h.prompts.Complete(ctx, name, arg.Name, arg.Value)
	if !ok {
		return nil, errUnknownRef
	}
	return completion(values), nil
}

type resourceCompleter struct{ h *Handler }

// CompleteResourceArgument offers the template variable's enum values.
func (c resourceCompleter) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	if src, ok := c.h.upstream.p.Load().templateOrigin[uri]; ok {
		return c.h.forwardComplete(ctx, src, map[string]any{"type": "ref/resource", "uri": uri}, arg, cctx)
	}
	values, ok := c.h.resources.Complete(ctx, uri, arg.Name, arg.Value)
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

// inspectRead notes a resources/read, prompts/get, completion/complete,
// resources/subscribe or resources/unsubscribe, so that the handler's (or
// hook's) failure reaches the wire with its own code, and a forwarded
// request its upstream's own result (fastpath.Writer rewrites mcp-go's answer for
// that id); and a list whose entries include a source's own
// (fastpath.ListEntries). Nil for anything else.
func (h *Handler) inspectRead(body []byte, r *http.Request) *fastpath.Call {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 {
		return nil
	}
	st := &fastpath.Call{Header: r.Header, RemoteAddr: r.RemoteAddr, TLS: r.TLS, RawID: msg.ID}
	switch mcp.MCPMethod(msg.Method) {
	case mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe:
		st.Overrides = true
	case mcp.MethodResourcesRead, mcp.MethodPromptsGet, mcp.MethodCompletionComplete:
	case mcp.MethodToolsList, mcp.MethodResourcesList, mcp.MethodResourcesTemplatesList, mcp.MethodPromptsList:
		if h.passOnList(st, msg.Method); st.List == nil {
			return nil
		}
	default:
		return nil
	}
	st.ID = jsonrpc.DecodeID(msg.ID)
	return st
}
