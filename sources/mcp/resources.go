package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
)

// The upstream's resources, resource templates and prompts (README,
// Sources: MCP servers): listed (every page) when the session starts and
// again on the server's resources/list_changed or prompts/list_changed;
// resources/read and prompts/get forwarded.

var _ pipeline.CatalogSource = (*Source)(nil)

// Catalog implements pipeline.CatalogSource: what the shared session
// listed. With session per_caller, reads, gets and completions go on the
// caller's own session (forward).
func (s *Source) Catalog() pipeline.SourceCatalog {
	s.conn.mu.Lock()
	defer s.conn.mu.Unlock()
	return s.conn.cat
}

// ReadResource implements pipeline.CatalogSource.
func (s *Source) ReadResource(ctx context.Context, uri string) (json.RawMessage, error) {
	return s.conn.forward(ctx, string(mcp.MethodResourcesRead), map[string]any{"uri": uri})
}

// GetPrompt implements pipeline.CatalogSource.
func (s *Source) GetPrompt(ctx context.Context, name string, args map[string]string) (json.RawMessage, error) {
	params := map[string]any{"name": name}
	if len(args) > 0 {
		params["arguments"] = args
	}
	return s.conn.forward(ctx, string(mcp.MethodPromptsGet), params)
}

// Complete implements pipeline.CatalogSource.
func (s *Source) Complete(ctx context.Context, params map[string]any) (json.RawMessage, error) {
	return s.conn.forward(ctx, string(mcp.MethodCompletionComplete), params)
}

// forward sends one request on the current session (connecting when there
// is none), or with session per_caller on the session of the caller in ctx
// (pipeline.RequestCaller), within the source's timeout.
func (c *conn) forward(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return c.send(ctx, false, method, params)
}

// forwardShared is forward on the shared session whatever the source's
// sessions: subscriptions are the source's, not a caller's (SubscribeResource).
func (c *conn) forwardShared(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return c.send(ctx, true, method, params)
}

func (c *conn) send(ctx context.Context, shared bool, method string, params any) (json.RawMessage, error) {
	if d := c.set.built.Timeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	var src sessionSource = c
	if !shared {
		var release func()
		var err error
		if src, release, err = c.sessionFor(ctx, pipeline.RequestCaller(ctx)); err != nil {
			return nil, err
		}
		defer release()
	}
	perCaller := !shared && c.callers != nil
	s, err := src.ensure(ctx)
	if err != nil {
		return nil, unreachable(err, perCaller)
	}
	raw, _, err := s.request(ctx, method, params)
	if err == nil {
		return raw, nil
	}
	if answer := serverAnswer(err, perCaller); answer != nil {
		return nil, answer
	}
	return nil, transportFailure(ctx, err, "the connection to the MCP server failed")
}

// listCatalog lists what the server declared it has: resources and
// templates with the resources capability, prompts with prompts. Each
// list stands alone: one the server refuses (a server with resources may
// answer -32601 to resources/templates/list) is empty, the others are
// served, and the error names every list that failed.
func (s *session) listCatalog(ctx context.Context) (pipeline.SourceCatalog, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	cat := pipeline.SourceCatalog{Instructions: s.instructions}
	caps := s.client.GetServerCapabilities()
	var errs []error
	list := func(into *[]json.RawMessage, method, key string) {
		items, err := s.listAll(ctx, method, key)
		if err != nil {
			errs = append(errs, err)
		}
		*into = items
	}
	if caps.Resources != nil {
		list(&cat.Resources, string(mcp.MethodResourcesList), "resources")
		list(&cat.Templates, string(mcp.MethodResourcesTemplatesList), "resourceTemplates")
	}
	if caps.Prompts != nil {
		list(&cat.Prompts, string(mcp.MethodPromptsList), "prompts")
	}
	return cat, errors.Join(errs...)
}

// listAll follows the cursors of one list method.
func (s *session) listAll(ctx context.Context, method, key string) ([]json.RawMessage, error) {
	var all []json.RawMessage
	seen := map[string]bool{}
	cursor := ""
	for {
		var params any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		raw, _, err := s.request(ctx, method, params)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", method, err)
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("bad %s result: %v", method, err)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(page[key], &items); page[key] != nil && err != nil {
			return nil, fmt.Errorf("bad %s result: %v", method, err)
		}
		all = append(all, items...)
		var next string
		_ = json.Unmarshal(page["nextCursor"], &next)
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("%s returned cursor %q twice", method, next)
		}
		seen[next] = true
		cursor = next
	}
}

// catalogChanged handles the server's resources/list_changed and
// prompts/list_changed: the catalog is listed again (relistCatalogNow) and
// the gateway told.
func (c *conn) catalogChanged(n mcp.JSONRPCNotification) {
	if n.Method == string(mcp.MethodNotificationResourcesListChanged) || n.Method == string(mcp.MethodNotificationPromptsListChanged) {
		c.relistCatalog.Trigger()
	}
}

// relistCatalogNow lists the catalog again on the shared session.
func (c *conn) relistCatalogNow() {
	s := c.current()
	if s == nil {
		return // the next connect lists it
	}
	cat, err := s.listCatalog(c.ctx)
	if err != nil { // what did list is served
		c.log.Warn("MCP server's resources or prompts could not all be listed after list_changed", zap.String("server", c.set.describe()), zap.Error(err))
	}
	c.publish(s, func() { c.cat = cat })
}
