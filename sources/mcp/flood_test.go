package mcp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestListChangedFlood: 300 tools/list_changed notices while a listing is
// in flight cost one more listing and two changes told to the gateway,
// not 300 of each. The server's tool "flood" sends the notices on its
// call's stream before its answer (mcp-go writes what is queued first), so
// that they have all been handled when the call returns; its tools/list
// waits while the test holds it. Each notice cost a listing and a rebuild
// of the gateway's tools.
func TestListChangedFlood(t *testing.T) {
	var lists atomic.Int64
	var hold sync.Mutex // held: tools/list waits
	hooks := &server.Hooks{}
	hooks.AddBeforeListTools(func(context.Context, any, *mcp.ListToolsRequest) {
		lists.Add(1)
		hold.Lock()
		hold.Unlock() //nolint:staticcheck // waits for the test to let go
	})
	m := server.NewMCPServer("flood", "1", server.WithToolCapabilities(true), server.WithHooks(hooks))
	m.AddTool(mcp.NewTool("flood"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for sent := 0; sent < 300; {
			err := server.ServerFromContext(ctx).SendNotificationToClient(ctx, string(mcp.MethodNotificationToolsListChanged), nil)
			switch {
			case errors.Is(err, server.ErrNotificationChannelBlocked):
				runtime.Gosched() // the session's queue (100) drains to the stream
			case err != nil:
				return nil, err
			default:
				sent++
			}
		}
		return mcp.NewToolResultText("sent"), nil
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// No standalone GET stream: the session's notices would leave on
	// whichever of its streams reads first, some after the call's answer.
	srv := &http.Server{Handler: server.NewStreamableHTTPServer(m, server.WithDisableStreaming(true))}
	go srv.Serve(l)
	t.Cleanup(func() { _ = srv.Close() })

	s := &Source{URL: "http://" + l.Addr().String() + "/mcp", Transport: TransportStreamable}
	provision(t, s)
	var changes atomic.Int64
	s.OnChange(func() { changes.Add(1) })
	waitUntil(t, "the source to settle", func() bool { return s.conn.version() == s.seen.Load() || changes.Load() > 0 })
	listed, told := lists.Load(), changes.Load()

	hold.Lock()
	flood := toolNamed(t, s, "flood")
	if _, err := callText(t, flood, nil); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the listing after the first notice", func() bool { return lists.Load() == listed+1 })
	hold.Unlock()
	waitUntil(t, "two changes told", func() bool { return changes.Load() >= told+2 })
	if n, c := lists.Load()-listed, changes.Load()-told; n != 2 || c != 2 {
		t.Errorf("300 notices cost %d listings and %d changes told, want 2 and 2", n, c)
	}
}
