package caddymodule

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/edgemcp/edgemcp/caddymodule/catalog"
	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
)

const gateTestKey = "gate-test-key-0123456789abcdef"

// gateCaddyfile is a catch-all site (SITE: any Host reaches it) with
// default_auth, so that every path the handlers serve exists: the endpoint,
// the catalog, the protected resource metadata route and a toolset's path
// with its own metadata route.
func gateCaddyfile(t *testing.T) string {
	seed, _ := filepath.Abs("../examples/data/demo.sql")
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		connector lite sqlite %q {
			read_only
			seed %q
		}
		auth keys api_key {
			key {env.EDGEMCP_GATE_TEST_KEY} {
				subject gate
			}
		}
		default_auth keys
		tool gate-customers {
			description "Counts customers"
			use lite
			statement "SELECT count(*) AS n FROM customers"
		}
		toolset counts {
			tools gate-*
		}
	}
}`, filepath.Join(t.TempDir(), "gate.db"), seed)
}

// gateRequest sends one request with the given Host and Origin (none when
// empty) and the gateway's API key, and returns the status and body.
func gateRequest(t *testing.T, g *gateway, method, path, host, origin string, header map[string]string, body string) (int, string) {
	t.Helper()
	status, _, raw := gateExchange(t, g, method, path, host, origin, header, body)
	return status, raw
}

func gateExchange(t *testing.T, g *gateway, method, path, host, origin string, header map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, fmt.Sprintf("http://127.0.0.1:%d%s", g.port, path), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("X-API-Key", gateTestKey)
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if method == http.MethodGet && strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		return res.StatusCode, res.Header, "" // an open stream: the status is the answer
	}
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
	return res.StatusCode, res.Header, string(raw)
}

func refusedCount(reason string) float64 {
	return testutil.ToFloat64(telemetry.GateRefusals.WithLabelValues(reason))
}

// The DNS-rebinding hole: on a site that accepts any Host, a page on
// evil.example that rebinds its name to the gateway sends Host and Origin
// evil.example, which agree. Every method and path the handlers serve must
// refuse it before doing anything, including the direct tools/call path
// with a genuine session id and a valid key.
func TestGateRefusesForeignHostOnEveryPath(t *testing.T) {
	t.Setenv("EDGEMCP_GATE_TEST_KEY", gateTestKey)
	g := startGateway(t, gateCaddyfile(t))
	own := fmt.Sprintf("127.0.0.1:%d", g.port)
	evil := fmt.Sprintf("evil.example:%d", g.port)

	json := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	status, hdr, _ := gateExchange(t, g, "POST", "/mcp", own, "", json, initializeBody)
	if status != http.StatusOK || hdr.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize from the endpoint's own host: %d, session %q", status, hdr.Get("Mcp-Session-Id"))
	}
	session := map[string]string{"Mcp-Session-Id": hdr.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-06-18"}
	status, hdr, _ = gateExchange(t, g, "POST", "/mcp/counts", own, "", json, initializeBody)
	if status != http.StatusOK || hdr.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize at the toolset's path from the endpoint's own host: %d, session %q", status, hdr.Get("Mcp-Session-Id"))
	}
	toolset := map[string]string{"Mcp-Session-Id": hdr.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-06-18"}
	with := func(hs ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, h := range hs {
			for k, v := range h {
				out[k] = v
			}
		}
		return out
	}
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"gate-customers","arguments":{}}}`
	requests := []struct {
		name, method, path string
		header             map[string]string
		body               string
	}{
		{"direct tools/call", "POST", "/mcp", with(json, session), call},
		{"tools/call with _meta", "POST", "/mcp", with(json, session), `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"gate-customers","arguments":{},"_meta":{"progressToken":1}}}`},
		{"tools/call without session", "POST", "/mcp", json, call},
		{"tools/list", "POST", "/mcp", with(json, session), `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`},
		{"initialize", "POST", "/mcp", json, initializeBody},
		{"GET stream", "GET", "/mcp", with(session, map[string]string{"Accept": "text/event-stream"}), ""},
		{"DELETE session", "DELETE", "/mcp", session, ""},
		{"OPTIONS", "OPTIONS", "/mcp", nil, ""},
		{"catalog page", "GET", "/mcp", map[string]string{"Accept": "text/html"}, ""},
		{"catalog script", "GET", "/mcp?" + catalog.ScriptQuery, nil, ""},
		{"metadata document", "GET", "/.well-known/oauth-protected-resource/mcp", nil, ""},
		{"toolset: direct tools/call", "POST", "/mcp/counts", with(json, toolset), call},
		{"toolset: initialize", "POST", "/mcp/counts", json, initializeBody},
		{"toolset: GET stream", "GET", "/mcp/counts", with(toolset, map[string]string{"Accept": "text/event-stream"}), ""},
		{"toolset: catalog page", "GET", "/mcp/counts", map[string]string{"Accept": "text/html"}, ""},
		{"toolset: metadata document", "GET", "/.well-known/oauth-protected-resource/mcp/counts", nil, ""},
	}
	foreign := []struct {
		name, host, origin, reason string
	}{
		{"rebound host and origin", evil, "http://" + evil, "host"},
		{"foreign host, no origin", evil, "", "host"},
		{"foreign host, own origin", evil, "http://" + own, "host"},
		{"own host, foreign origin", own, "http://" + evil, "origin"},
	}
	hostBefore, originBefore, directBefore := refusedCount("host"), refusedCount("origin"), directCount()
	for _, req := range requests {
		for _, f := range foreign {
			status, body := gateRequest(t, g, req.method, req.path, f.host, f.origin, req.header, req.body)
			if status != http.StatusForbidden || !strings.Contains(body, "allowed_"+f.reason+"s") {
				t.Errorf("%s, %s: %d %q, want 403 naming allowed_%ss", req.name, f.name, status, body, f.reason)
			}
			if strings.Contains(body, `"n"`) {
				t.Errorf("%s, %s: the tool ran: %s", req.name, f.name, body)
			}
		}
	}
	if n := directCount() - directBefore; n != 0 {
		t.Errorf("the direct path answered %d refused calls", n)
	}
	if got := refusedCount("host") - hostBefore; got != float64(3*len(requests)) {
		t.Errorf("edgemcp_requests_refused_total{reason=host} rose by %v, want %d", got, 3*len(requests))
	}
	if got := refusedCount("origin") - originBefore; got != float64(len(requests)) {
		t.Errorf("edgemcp_requests_refused_total{reason=origin} rose by %v, want %d", got, len(requests))
	}

	// The same requests from the endpoint's own host get past the gate (the
	// DELETE last: it ends the session).
	for _, req := range requests {
		status, body := gateRequest(t, g, req.method, req.path, own, "", req.header, req.body)
		if status == http.StatusForbidden {
			t.Errorf("%s from the endpoint's own host: 403 %q", req.name, body)
		}
		if strings.HasSuffix(req.name, "direct tools/call") && !strings.Contains(body, `\"n\":`) {
			t.Errorf("direct tools/call from the endpoint's own host: %d %q", status, body)
		}
	}
}

// The names an endpoint accepts: its site addresses, IP addresses,
// localhost, and allowed_hosts (exact and wildcard).
func TestGateAcceptsTheEndpointsNames(t *testing.T) {
	g := startGateway(t, "")
	seed, _ := filepath.Abs("../examples/data/demo.sql")
	db := filepath.Join(t.TempDir(), "names.db")
	block := func(extra string) string {
		return fmt.Sprintf(`mcp /mcp {
		%s
		connector lite sqlite %q {
			read_only
			seed %q
		}
		tool n {
			description "One"
			use lite
			statement "SELECT 1 AS n"
		}
	}`, extra, db, seed)
	}
	cfg := fmt.Sprintf(`http://site.example:%[1]d {
	bind 127.0.0.1
	%[2]s
}
http://:%[1]d {
	bind 127.0.0.1
	%[3]s
}`, g.port, block(""), block("allowed_hosts mcp.example.com *.corp.example"))
	if err := g.load(cfg); err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(g.port)
	for _, c := range []struct {
		host string
		ok   bool
	}{
		{"site.example:" + port, true}, // the named site's own address
		{"SITE.example:" + port, true}, // names are case-insensitive
		{"mcp.example.com:" + port, true},
		{"mcp.example.com", true},
		{"a.corp.example:" + port, true},
		{"127.0.0.1:" + port, true},
		{"[::1]:" + port, true},
		{"localhost:" + port, true},
		{"app.localhost:" + port, true},
		{"corp.example:" + port, false}, // *.corp.example needs a label
		{"a.b.corp.example:" + port, false},
		{"evil.example:" + port, false},
		{"mcp.example.com.evil.example:" + port, false},
		{"site.example.evil.example:" + port, false},
	} {
		hdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
		status, body := gateRequest(t, g, "POST", "/mcp", c.host, "", hdr, initializeBody)
		if got := status != http.StatusForbidden; got != c.ok {
			t.Errorf("Host %s: %d %q, want admitted=%v", c.host, status, body, c.ok)
		}
	}
}
