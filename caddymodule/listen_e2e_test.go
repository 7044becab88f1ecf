package caddymodule

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestListenToolsListChanged: on 2026-07-28, which has no GET stream, a
// client opts in to notifications with subscriptions/listen (mcp-go's
// client, ListenAsync): the gateway acknowledges tools list_changed and
// delivers it on that stream when a source's tools change.
func TestListenToolsListChanged(t *testing.T) {
	srv, setDoc := liveSpecServer(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source live openapi %s/spec.json {
			base_url %s
			refresh 100ms
		}
	}
}`, srv.URL, srv.URL))
	c := g.mcpClient(t)
	var mu sync.Mutex
	var seen []string
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		mu.Lock()
		seen = append(seen, n.Method)
		mu.Unlock()
	})
	has := func(method string) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range seen {
				if m == method {
					return true
				}
			}
			return false
		}
	}
	stop, err := c.ListenAsync(context.Background(), mcp.SubscriptionFilter{ToolsListChanged: true}, func(err error) { t.Errorf("listen: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	waitFor(t, "notifications/subscriptions/acknowledged", has("notifications/subscriptions/acknowledged"))
	if has("notifications/tools/list_changed")() {
		t.Fatal("list_changed before the tools changed")
	}
	setDoc(specWithB)
	waitFor(t, "notifications/tools/list_changed on the listen stream", has("notifications/tools/list_changed"))
}
