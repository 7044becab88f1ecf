package upstreams

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
)

// subscriptions/listen (2026-07-28) replaces resources/subscribe: the
// resources a client wants updates of are in the filter of one long-lived
// request, whose stream carries the updates. mcp-go serves the stream on
// a session of that request alone, with no id, and records the URIs on it
// without asking the gateway; the hooks below pass them on to the sources
// under an id of the stream's own (listenPrefix), as a session's
// subscriptions are, and drop them when the stream ends. An update for
// such an id goes to the stream's session directly.

// listenPrefix starts the ids of listen streams, which no MCP session id
// (mcp-session-…) starts with.
const listenPrefix = "listen-"

// listens are the open listen streams with resource subscriptions.
type listens struct {
	mu   sync.Mutex
	byID map[string]server.ClientSession
	ids  map[server.ClientSession]string
	done map[string]func() // ends the stream's activity (Busy)
}

func (r *Set) listenHooks(hooks *server.Hooks) {
	hooks.AddBeforeSubscriptionsListen(func(ctx context.Context, _ any, req *mcp.SubscriptionsListenRequest) {
		uris := req.Params.Notifications.ResourceSubscriptions
		sess := server.ClientSessionFromContext(ctx)
		if !r.subscribable || r.subs == nil || len(uris) == 0 || sess == nil {
			return
		}
		var b [12]byte
		_, _ = rand.Read(b[:])
		id := listenPrefix + hex.EncodeToString(b[:])
		for _, uri := range uris {
			// A URI nothing serves, or that cannot be watched, is
			// subscribed to nothing: it brings no update.
			src, _ := r.resourceOrigin(ctx, uri)
			if src == nil {
				continue
			}
			if err := src.SubscribeResource(ctx, uri, id); err != nil {
				r.Logger.Debug("listen: resource subscription refused upstream", zap.String("uri", uri), zap.Error(err))
				continue
			}
			r.subs.add(id, src)
		}
		if !r.subs.has(id) {
			return
		}
		l := &r.listens
		l.mu.Lock()
		if l.byID == nil {
			l.byID, l.ids, l.done = map[string]server.ClientSession{}, map[server.ClientSession]string{}, map[string]func(){}
		}
		l.byID[id], l.ids[sess] = sess, id
		l.done[id] = r.Busy(id) // active while the stream is open
		l.mu.Unlock()
	})
	hooks.AddAfterSubscriptionsListen(func(ctx context.Context, _ any, _ *mcp.SubscriptionsListenRequest, _ *mcp.SubscriptionsListenResult) {
		r.endListen(server.ClientSessionFromContext(ctx))
	})
	hooks.AddOnError(func(ctx context.Context, _ any, method mcp.MCPMethod, _ any, _ error) {
		if method == mcp.MethodSubscriptionsListen {
			r.endListen(server.ClientSessionFromContext(ctx))
		}
	})
}

// endListen drops the subscriptions of the listen stream of sess.
func (r *Set) endListen(sess server.ClientSession) {
	if sess == nil {
		return
	}
	l := &r.listens
	l.mu.Lock()
	id, ok := l.ids[sess]
	done := l.done[id]
	delete(l.ids, sess)
	delete(l.byID, id)
	delete(l.done, id)
	l.mu.Unlock()
	if !ok {
		return
	}
	done()
	r.subs.end(id)
}

// notifyListen sends the update of uri to the listen stream id; false
// when id is no listen stream's.
func (r *Set) notifyListen(id, uri string) bool {
	if len(id) < len(listenPrefix) || id[:len(listenPrefix)] != listenPrefix {
		return false
	}
	r.listens.mu.Lock()
	sess := r.listens.byID[id]
	r.listens.mu.Unlock()
	if sess == nil {
		return true
	}
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: string(mcp.MethodNotificationResourceUpdated), Params: mcp.NotificationParams{AdditionalFields: map[string]any{"uri": uri}}}}
	select {
	case sess.NotificationChannel() <- n:
	default:
		r.Logger.Debug("resource update not delivered: the listen stream is full", zap.String("uri", uri))
	}
	return true
}
