//go:build linux

package caddymodule

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestResourceSubscribeListen: on 2026-07-28 mcp-go's client names a
// source's resource in the filter of subscriptions/listen; the gateway
// subscribes upstream for that stream, delivers the server's
// notifications/resources/updated on it, and unsubscribes upstream when
// the stream ends.
func TestResourceSubscribeListen(t *testing.T) {
	up := startConformanceUpstream(t)
	g := startGateway(t, subscribeCaddyfile(t, fmt.Sprintf("source conf mcp %s", up)))
	ctl := g.rawSession(t, subVersion)
	c := g.mcpClient(t)
	var acknowledged atomic.Bool
	var updated atomic.Value
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		switch n.Method {
		case string(mcp.MethodNotificationSubscriptionsAcknowledged):
			acknowledged.Store(true)
		case string(mcp.MethodNotificationResourceUpdated):
			updated.Store(n.Params.AdditionalFields["uri"])
		}
	})
	stop, err := c.ListenAsync(context.Background(), mcp.SubscriptionFilter{ResourceSubscriptions: []string{watchedURI}},
		func(err error) { t.Errorf("listen: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "notifications/subscriptions/acknowledged", acknowledged.Load)
	if got := notify(t, ctl, watchedURI); got != "notified 1 sessions" {
		t.Fatalf("upstream while the stream is open: %s", got)
	}
	waitFor(t, "the update on the listen stream", func() bool {
		if updated.Load() == watchedURI {
			return true
		}
		notify(t, ctl, watchedURI)
		return false
	})
	stop()
	waitFor(t, "the upstream subscription dropped with the stream", func() bool {
		return notify(t, ctl, watchedURI) == "notified 0 sessions"
	})
}
