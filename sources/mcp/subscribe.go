package mcp

import (
	"context"
	"maps"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Resource subscriptions (README, Sources: MCP servers). One upstream
// session serves every downstream client, so the connection counts the
// downstream sessions subscribed to each URI: the first subscribes
// upstream, the last to leave (unsubscribe, or its session ended)
// unsubscribes, and the server's notifications/resources/updated goes to
// exactly the sessions on that URI. The count lives with the connection,
// which a reload that keeps the source's settings keeps too.

var _ pipeline.ResourceSubscriber = (*Source)(nil)

// Subscribable implements pipeline.ResourceSubscriber.
func (s *Source) Subscribable() bool {
	sess := s.conn.current()
	if sess == nil || sess.client == nil {
		return false
	}
	caps := sess.client.GetServerCapabilities()
	return caps.Resources != nil && caps.Resources.Subscribe
}

// OnResourceUpdated implements pipeline.ResourceSubscriber.
func (s *Source) OnResourceUpdated(updated func(uri string, sessions []string)) {
	s.conn.mu.Lock()
	s.conn.onUpdated[s] = updated
	s.conn.mu.Unlock()
}

// SubscribeResource implements pipeline.ResourceSubscriber.
func (s *Source) SubscribeResource(ctx context.Context, uri, session string) error {
	c := s.conn
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	c.mu.Lock()
	subs := c.watched[uri]
	c.mu.Unlock()
	if len(subs) == 0 {
		if _, err := c.forwardShared(ctx, string(mcp.MethodResourcesSubscribe), map[string]any{"uri": uri}); err != nil {
			return err
		}
	}
	c.mu.Lock()
	if c.watched[uri] == nil {
		c.watched[uri] = map[string]struct{}{}
	}
	c.watched[uri][session] = struct{}{}
	c.mu.Unlock()
	return nil
}

// UnsubscribeResource implements pipeline.ResourceSubscriber. The
// downstream subscription is gone even when the upstream unsubscribe
// fails: the server's next update then reaches nobody.
func (s *Source) UnsubscribeResource(ctx context.Context, uri, session string) error {
	c := s.conn
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	if !c.leave(uri, session) {
		return nil
	}
	_, err := c.forwardShared(ctx, string(mcp.MethodResourcesUnsubscribe), map[string]any{"uri": uri})
	return err
}

// EndSession implements pipeline.ResourceSubscriber.
func (s *Source) EndSession(session string) {
	c := s.conn
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	c.mu.Lock()
	var uris []string
	for uri, subs := range c.watched {
		if _, ok := subs[session]; ok {
			uris = append(uris, uri)
		}
	}
	c.mu.Unlock()
	for _, uri := range uris {
		if !c.leave(uri, session) {
			continue
		}
		sess := c.current()
		if sess == nil {
			continue // a new session subscribes only to what is watched
		}
		ctx, cancel := context.WithTimeout(c.ctx, cancelTimeout)
		if _, _, err := sess.request(ctx, string(mcp.MethodResourcesUnsubscribe), map[string]any{"uri": uri}); err != nil {
			c.log.Debug("MCP server's resources/unsubscribe failed", zap.String("uri", uri), zap.Error(err))
		}
		cancel()
	}
}

// leave removes session from uri and reports whether it was the last.
func (c *conn) leave(uri, session string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	subs, ok := c.watched[uri]
	if !ok {
		return false
	}
	if _, ok := subs[session]; !ok {
		return false
	}
	delete(subs, session)
	if len(subs) > 0 {
		return false
	}
	delete(c.watched, uri)
	return true
}

// resourceUpdated passes the server's notifications/resources/updated to
// every config using the connection, with the sessions on that URI.
func (c *conn) resourceUpdated(n mcp.JSONRPCNotification) {
	uri, _ := n.Params.AdditionalFields["uri"].(string)
	c.mu.Lock()
	sessions := slices.Sorted(maps.Keys(c.watched[uri]))
	fns := slices.Collect(maps.Values(c.onUpdated))
	c.mu.Unlock()
	if len(sessions) == 0 {
		return // nobody subscribed (any more)
	}
	for _, f := range fns {
		f(uri, sessions)
	}
}

// resubscribe subscribes a new upstream session (the server restarted or
// the connection was lost) to every URI a downstream session watches.
func (c *conn) resubscribe(s *session) {
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	c.mu.Lock()
	uris := slices.Collect(maps.Keys(c.watched))
	c.mu.Unlock()
	for _, uri := range uris {
		ctx, cancel := context.WithTimeout(c.ctx, listTimeout)
		if _, _, err := s.request(ctx, string(mcp.MethodResourcesSubscribe), map[string]any{"uri": uri}); err != nil {
			c.log.Warn("MCP server did not take a resource subscription again after reconnecting", zap.String("uri", uri), zap.Error(err))
		}
		cancel()
	}
}
