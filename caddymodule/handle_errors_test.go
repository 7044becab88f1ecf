package caddymodule

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestHandleErrorsSeesRefusals: the requests the handler turns away
// before MCP sees them (413 body too large, 503 over max_concurrent, 429
// over the endpoint's rate limit) reach the site's handle_errors routes,
// as the errors of Caddy's own handlers do, with their status and
// Retry-After; without handle_errors they are JSON-RPC errors
// (TestEndToEndBodyLimit, TestEndpointMaxConcurrent, TestEndpointRateLimit).
func TestHandleErrorsSeesRefusals(t *testing.T) {
	testDB(t)
	app := appName(t)
	dsn := withParams(t, postgresURL(t), "application_name", app)
	g := startGateway(t, fmt.Sprintf(`SITE {
	handle_errors {
		header X-Handled yes
		respond "handled {err.status_code}" {err.status_code}
	}
	mcp /mcp {
		max_body_size 1KiB
		max_concurrent 1
		rate_limit 6 per 1h by ip
		connector pg postgres %q
		tool slow {
			description "Sleeps"
			use pg
			statement "SELECT pg_sleep({{ inputs.s }}) IS NULL AS slept"
			input s float required
		}
	}
}`, dsn))
	s := g.rawSession(t, "2025-06-18") // initialize and initialized: 2 requests of 6
	handled := func(what string, res *http.Response, body []byte, status int) {
		t.Helper()
		if res.StatusCode != status || res.Header.Get("X-Handled") != "yes" || string(body) != fmt.Sprintf("handled %d", status) {
			t.Errorf("%s: %d %q X-Handled %q, want handle_errors' %d", what, res.StatusCode, body, res.Header.Get("X-Handled"), status)
		}
		if status != http.StatusRequestEntityTooLarge && res.Header.Get("Retry-After") == "" {
			t.Errorf("%s: no Retry-After", what)
		}
	}

	res, body := s.exchange(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"`+strings.Repeat("x", 2000)+`"}}`, nil)
	handled("an oversized body", res, body, http.StatusRequestEntityTooLarge) // 3 of 6

	var wg sync.WaitGroup
	wg.Add(1)
	var first callResult
	go func() { defer wg.Done(); first = s.callAsync(100, "slow", map[string]any{"s": 2}) }() // 4 of 6
	waitSleeping(t, app, 1)
	res, body = s.exchange(t, `{"jsonrpc":"2.0","id":101,"method":"tools/list"}`, nil) // refused before the rate limit counts it
	handled("a request over max_concurrent", res, body, http.StatusServiceUnavailable)
	wg.Wait()
	if first.err != nil || first.code != 0 {
		t.Fatalf("first call: %+v", first)
	}

	for id := 102; ; id++ {
		res, body = s.exchange(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id), nil)
		if res.StatusCode == http.StatusOK && id < 110 {
			continue
		}
		handled("a request over the rate limit", res, body, http.StatusTooManyRequests)
		if id != 104 {
			t.Errorf("request %d was the first refused, want the 7th (104)", id)
		}
		break
	}
}
