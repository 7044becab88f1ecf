package upstreams

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/resources"
	"github.com/edgemcp/edgemcp/pipeline"
)

// resources/subscribe and resources/unsubscribe (docs/sources.md, MCP
// servers, Subscriptions). The capability is declared when some MCP
// source's server takes subscriptions (pipeline.ResourceSubscriber). A
// subscription to such a source's resource is passed on under the calling
// session; the source counts the sessions per URI and hands back the
// server's notifications/resources/updated with the sessions to tell. A
// declared resource (a statement or a script) cannot know when its answer
// changes: subscribing to it is accepted, as clients expect of a server
// that declares the capability, and never brings an update. A URI that
// matches nothing, or a declared resource the caller may not read,
// answers "resource not found", as a read would.
//
// mcp-go's own handler always accepts; the hooks below do the work before
// it and a refusal replaces its empty result on the wire (Access.Fail on a
// request whose failure overrides a result). A session's subscriptions end
// with the session: its DELETE, its eviction (max_sessions),
// session_idle_timeout without a request or open stream, or the end of
// this config (a reload).

// Subscribable: some source's server takes subscriptions.
func (r *Set) Subscribable() bool { return r.subscribable }

// StartSubscriptions starts the subscription bookkeeping and asks the
// sources for their updates, when the capability is declared; idle is
// session_idle_timeout. It runs after Attach.
func (r *Set) StartSubscriptions(idle time.Duration) {
	if !r.subscribable {
		return
	}
	r.subs = newSubscribers(idle)
	srv, subs, log := r.srv, r.subs, r.Logger
	for _, s := range r.Sources {
		if rs, ok := s.Src.(pipeline.ResourceSubscriber); ok {
			rs.OnResourceUpdated(func(uri string, sessions []string) {
				for _, id := range sessions {
					if !subs.has(id) {
						continue // another config's session
					}
					if r.notifyListen(id, uri) {
						continue // a 2026-07-28 listen stream's
					}
					// A session without an open GET stream cannot be told
					// (mcp-go knows only those); the update is lost for it.
					if err := srv.SendNotificationToSpecificClient(id, string(mcp.MethodNotificationResourceUpdated), map[string]any{"uri": uri}); err != nil {
						log.Debug("resource update not delivered", zap.String("uri", uri), zap.Error(err))
					}
				}
			})
		}
	}
}

func (r *Set) subscribeHooks(hooks *server.Hooks) {
	hooks.AddBeforeSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest) {
		r.refuse(ctx, r.subscribe(ctx, req.Params.URI, true))
	})
	hooks.AddBeforeUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest) {
		r.refuse(ctx, r.subscribe(ctx, req.Params.URI, false))
	})
}

// refuse puts a failed (un)subscribe on the request's call state, whose
// writer answers it in place of mcp-go's empty result.
func (r *Set) refuse(ctx context.Context, err error) {
	perr, ok := err.(*pipeline.Error)
	if !ok || perr == nil {
		return
	}
	r.Access.Fail(ctx, perr)
}

// subscribe subscribes (on) or unsubscribes the calling session.
// A failure is a *pipeline.Error.
func (r *Set) subscribe(ctx context.Context, uri string, on bool) error {
	if !r.subscribable || uri == "" {
		return nil // mcp-go refuses it itself
	}
	sess := server.ClientSessionFromContext(ctx)
	if sess == nil || sess.SessionID() == "" {
		return pipeline.Fail(pipeline.StageResolution, nil, "resources/subscribe needs a session (Mcp-Session-Id)")
	}
	src, found := r.resourceOrigin(ctx, uri)
	switch {
	case !found && on:
		return resources.NotFound(ctx, uri)
	case src == nil:
		return nil // accepted, never updated (or nothing to unsubscribe)
	case on:
		if err := src.SubscribeResource(ctx, uri, sess.SessionID()); err != nil {
			return r.failed(ctx, err)
		}
		r.subs.add(sess.SessionID(), src)
	default:
		if err := src.UnsubscribeResource(ctx, uri, sess.SessionID()); err != nil {
			return r.failed(ctx, err)
		}
	}
	return nil
}

// resourceOrigin finds what serves uri, in the order of resources/read
// (resources, then templates, then the subscribable source that owns a
// URI nothing lists): a source whose server takes subscriptions, or nil
// for one that cannot be watched (a declared resource, a source whose
// server does not take them). found is false for a URI that matches
// nothing, or a declared resource the caller may not read.
func (r *Set) resourceOrigin(ctx context.Context, uri string) (src pipeline.ResourceSubscriber, found bool) {
	watchable := func(cs pipeline.CatalogSource) pipeline.ResourceSubscriber {
		if rs, ok := cs.(pipeline.ResourceSubscriber); ok && rs.Subscribable() {
			return rs
		}
		return nil
	}
	cat := r.cur.Load()
	if cs, ok := cat.resourceOrigin[uri]; ok {
		return watchable(cs), true
	}
	if res := r.Resources.Static(uri); res != nil {
		return nil, r.Resources.Readable(ctx, res)
	}
	for _, t := range cat.templates {
		if t.Template.URITemplate != nil && t.Template.URITemplate.Regexp().MatchString(uri) {
			return watchable(cat.templateOrigin[t.Template.URITemplate.Raw()]), true
		}
	}
	if res := r.Resources.Matching(uri); res != nil {
		return nil, r.Resources.Readable(ctx, res)
	}
	// A URI nothing lists: the source that owns it (unlistedOrigin).
	if cs := r.unlistedOrigin(uri, func(cs pipeline.CatalogSource) bool { return watchable(cs) != nil }); cs != nil {
		return watchable(cs), true
	}
	return nil, false
}

// Busy counts a request (or stream) of session id as activity until the
// returned function runs, when the session has subscriptions.
func (r *Set) Busy(id string) func() {
	s := r.subs
	if s == nil || id == "" {
		return func() {}
	}
	s.mu.Lock()
	ss := s.sessions[id]
	if ss != nil {
		ss.busy++
	}
	s.mu.Unlock()
	if ss == nil {
		return func() {}
	}
	return func() {
		s.mu.Lock()
		ss.busy--
		ss.last = time.Now()
		s.mu.Unlock()
	}
}

// EndSession ends the subscriptions of session id (its DELETE, its
// eviction), so that they are gone upstream by the time the client has
// its answer.
func (r *Set) EndSession(id string) {
	if r != nil && r.subs != nil {
		r.subs.end(id)
	}
}

// Close ends every session's subscriptions: this config is gone.
func (r *Set) Close() {
	if r != nil && r.subs != nil {
		r.subs.close()
	}
}

// subscribers are the sessions of this config with subscriptions, each
// with the sources to tell when it ends and its activity (for
// session_idle_timeout).
type subscribers struct {
	idle time.Duration
	stop context.CancelFunc

	mu       sync.Mutex
	sessions map[string]*subscribedSession
}

type subscribedSession struct {
	srcs map[pipeline.ResourceSubscriber]struct{}
	busy int // requests and streams running
	last time.Time
}

func newSubscribers(idle time.Duration) *subscribers {
	ctx, stop := context.WithCancel(context.Background())
	s := &subscribers{idle: idle, stop: stop, sessions: map[string]*subscribedSession{}}
	go s.sweep(ctx)
	return s
}

func (s *subscribers) add(id string, src pipeline.ResourceSubscriber) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[id]
	if ss == nil {
		ss = &subscribedSession{srcs: map[pipeline.ResourceSubscriber]struct{}{}, last: time.Now()}
		s.sessions[id] = ss
	}
	ss.srcs[src] = struct{}{}
}

func (s *subscribers) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sessions[id]
	return ok
}

// end removes a session and lets its sources drop its subscriptions.
func (s *subscribers) end(id string) {
	s.mu.Lock()
	ss := s.sessions[id]
	delete(s.sessions, id)
	s.mu.Unlock()
	if ss == nil {
		return
	}
	for src := range ss.srcs {
		src.EndSession(id)
	}
}

// close ends every session's subscriptions.
func (s *subscribers) close() {
	s.stop()
	s.mu.Lock()
	ids := slices.Collect(maps.Keys(s.sessions))
	s.mu.Unlock()
	for _, id := range ids {
		s.end(id)
	}
}

// sweep ends the sessions idle past session_idle_timeout (mcp-go forgets
// them then) until ctx ends.
func (s *subscribers) sweep(ctx context.Context) {
	t := time.NewTicker(max(s.idle/2, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			s.mu.Lock()
			var idle []string
			for id, ss := range s.sessions {
				if ss.busy == 0 && now.Sub(ss.last) > s.idle {
					idle = append(idle, id)
				}
			}
			s.mu.Unlock()
			for _, id := range idle {
				s.end(id)
			}
		}
	}
}
