package caddymodule

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
)

// TestReloadKeepsSessionsAndPools: a client session opened before a config
// reload that changes the tool set keeps working after it, sees the new
// tools, and the Postgres pool (same connector settings) is reused: no new
// pool is opened and the same backends keep serving.
func TestReloadKeepsSessionsAndPools(t *testing.T) {
	e2eSchema(t)
	before := e2eCaddyfile(t, "")
	g := startGateway(t, before)
	// A reload closes the old server's idle keep-alive connections, and a
	// POST racing that close fails with EOF (Go does not retry a POST).
	// That is Caddy's connection handling, not the session; to test the
	// session alone, this client opens a connection per request.
	noKeepAlive := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	c := g.mcpClient(t, transport.WithHTTPBasicClient(noKeepAlive))
	ctx := context.Background()

	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	call("get-user", map[string]any{"user_id": 1})
	opened := poolsOpenedCount("postgres")
	pids := edgemcpBackends(t)
	if len(pids) == 0 {
		t.Fatal("no edgemcp backend in pg_stat_activity")
	}

	after := strings.Replace(before, "tool broken {", `tool count-users {
			description "Counts users"
			use main
			statement "SELECT count(*) AS n FROM edgemcp_e2e.users"
		}
		tool broken-renamed {`, 1)
	if err := g.load(after); err != nil {
		t.Fatalf("reload: %v", err)
	}

	// The old session keeps working, against the new tool set. A connection
	// opened while Caddy is still closing the old server can be reset (Caddy's
	// listener hand-over, not the session); the first call may retry that.
	firstAfterReload := func() {
		t.Helper()
		for attempt := 0; ; attempt++ {
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = "get-user", map[string]any{"user_id": 1}
			_, err := c.CallTool(ctx, req)
			if err == nil {
				return
			}
			if attempt == 5 || !strings.Contains(err.Error(), "transport error") {
				t.Fatalf("first call after reload: %v", err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	firstAfterReload()
	res := call("count-users", nil)
	if text := res.Content[0].(mcp.TextContent).Text; text != `[{"n":3}]` {
		t.Fatalf("count-users: %s", text)
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "count-users") || slices.Contains(names, "broken") {
		t.Fatalf("tools after reload: %v", names)
	}

	if got := poolsOpenedCount("postgres"); got != opened {
		t.Fatalf("reload opened %d new pools, want 0", got-opened)
	}
	still := edgemcpBackends(t)
	kept := 0
	for _, pid := range pids {
		if slices.Contains(still, pid) {
			kept++
		}
	}
	if kept == 0 {
		t.Fatalf("backends before %v, after %v: the pool was reopened", pids, still)
	}

	// A changed connector setting makes a new pool, and the old one is closed.
	changed := strings.Replace(after, "max_conns 4", "max_conns 3", 1)
	if err := g.load(changed); err != nil {
		t.Fatal(err)
	}
	firstAfterReload()
	if got := poolsOpenedCount("postgres"); got != opened+1 {
		t.Fatalf("changed max_conns: %d pools opened, want 1", got-opened)
	}
}

func edgemcpBackends(t *testing.T) []int32 {
	t.Helper()
	rows, err := testDB(t).Query(context.Background(),
		`SELECT pid FROM pg_stat_activity WHERE application_name = 'edgemcp' ORDER BY pid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var pids []int32
	for rows.Next() {
		var pid int32
		if err := rows.Scan(&pid); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// poolsOpenedCount is edgemcp_connector_pools_opened_total summed over the
// given connector types.
func poolsOpenedCount(types ...string) int64 {
	var n float64
	for _, typ := range types {
		n += testutil.ToFloat64(telemetry.PoolsOpened.WithLabelValues(typ))
	}
	return int64(n)
}
