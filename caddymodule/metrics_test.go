package caddymodule

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scrape reads Caddy's admin /metrics and returns every sample, keyed by
// its series as the text format writes it: name{label="value",...} with
// labels sorted by name.
func scrape(t *testing.T, adminURL string) map[string]float64 {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	var body []byte
	for attempt := 0; ; attempt++ {
		resp, err := client.Get(adminURL + "/metrics")
		if err == nil {
			body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %d: %s", resp.StatusCode, body)
			}
		}
		if err == nil {
			break
		}
		// The admin listener is replaced on a reload.
		if attempt == 20 {
			t.Fatalf("GET %s/metrics: %v", adminURL, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	samples := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		if _, dup := samples[line[:i]]; dup {
			t.Fatalf("series %s is exposed twice", line[:i])
		}
		samples[line[:i]] = v
	}
	return samples
}

// TestMetricsAcrossReload scrapes Caddy's admin /metrics after calls and
// again after a `caddy reload`: the call counters go on from where they
// were (the collectors are registered in each config's registry, neither
// failing nor counting twice), stage histograms and pool gauges are there
// once, and no input value is a label.
func TestMetricsAcrossReload(t *testing.T) {
	obsSchema(t)
	dsn, password := obsDSN(t)
	cfg := obsCaddyfile(t, dsn, "", "")
	g := startGateway(t, cfg)
	g.admin = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	if err := g.load(cfg); err != nil {
		t.Fatal(err)
	}
	admin := "http://" + g.admin
	before := scrape(t, admin)

	raw := g.rawSession(t, "2025-06-18")
	for range 3 {
		raw.call(t, "obs-find", map[string]any{"email": secretInput}).tool(t)
	}
	raw.call(t, "obs-broken", nil)
	raw.call(t, "obs-get", map[string]any{"id": secretBadInput})
	raw.call(t, "made-up-tool", nil)

	okFind := `edgemcp_tool_calls_total{code="0",outcome="ok",tool="obs-find"}`
	errBroken := `edgemcp_tool_calls_total{code="-32000",outcome="error",tool="obs-broken"}`
	findCount := `edgemcp_tool_call_duration_seconds_count{tool="obs-find"}`
	execCount := `edgemcp_stage_duration_seconds_count{stage="execution",tool="obs-find"}`
	queryStage := `edgemcp_stage_duration_seconds_count{stage="execution",tool="obs-get"}`
	poolMax := `edgemcp_connector_pool_max_connections{connector="obsdb",type="postgres"}`
	poolOpen := `edgemcp_connector_pool_open_connections{connector="obsdb",type="postgres"}`
	litePool := `edgemcp_connector_pool_max_connections{connector="obslite",type="sqlite"}`
	delta := func(now, then map[string]float64, series string) float64 {
		t.Helper()
		v, ok := now[series]
		if !ok {
			t.Fatalf("no series %s", series)
		}
		return v - then[series]
	}

	after := scrape(t, admin)
	for series, want := range map[string]float64{okFind: 3, errBroken: 1, findCount: 3, execCount: 3,
		`edgemcp_tool_calls_total{code="-32000",outcome="error",tool="obs-get"}`:  1,
		`edgemcp_tool_calls_total{code="-32601",outcome="error",tool="_unknown"}`: 1} {
		if got := delta(after, before, series); got != want {
			t.Errorf("%s went up by %v, want %v", series, got, want)
		}
	}
	if _, ran := after[queryStage]; ran {
		t.Errorf("obs-get failed validation but has an execution timing")
	}
	if after[poolMax] != 3 || after[poolOpen] < 1 {
		t.Errorf("pool gauges: max %v open %v", after[poolMax], after[poolOpen])
	}
	if _, ok := after[litePool]; !ok {
		t.Errorf("no pool gauges for the sqlite connector")
	}

	// A reload with one more tool: same collectors, same pools.
	if err := g.load(obsCaddyfile(t, dsn, "", `tool obs-count {
			description "Counts users"
			use obsdb
			statement "SELECT count(*) AS n FROM obs_telemetry.users"
			cache 1m
		}`)); err != nil {
		t.Fatalf("reload: %v", err)
	}
	waitServing(t, g)
	raw = g.rawSession(t, "2025-06-18")
	raw.call(t, "obs-find", map[string]any{"email": secretInput}).tool(t)
	raw.call(t, "obs-count", nil).tool(t)
	raw.call(t, "obs-count", nil).tool(t) // from the cache
	reloaded := scrape(t, admin)
	if got := delta(reloaded, before, okFind); got != 4 {
		t.Errorf("after the reload %s went up by %v in all, want 4 (no reset, no double count)", okFind, got)
	}
	if got := delta(reloaded, after, findCount); got != 1 {
		t.Errorf("after the reload %s went up by %v, want 1", findCount, got)
	}
	for series, want := range map[string]float64{
		`edgemcp_tool_calls_total{code="0",outcome="ok",tool="obs-count"}`:            2,
		`edgemcp_cache_requests_total{result="miss",tool="obs-count"}`:                1,
		`edgemcp_cache_requests_total{result="hit",tool="obs-count"}`:                 1,
		`edgemcp_outbound_duration_seconds_count{system="postgres",tool="obs-count"}`: 1,
		`edgemcp_outbound_duration_seconds_count{system="postgres",tool="obs-find"}`:  4,
	} {
		if got := delta(reloaded, before, series); got != want {
			t.Errorf("after the reload %s went up by %v, want %v", series, got, want)
		}
	}
	if reloaded[poolMax] != 3 {
		t.Errorf("pool gauge after the reload: %v", reloaded[poolMax])
	}

	for series := range reloaded {
		for _, secret := range []string{secretInput, secretBadInput, password, "made-up-tool"} {
			if strings.Contains(series, secret) {
				t.Errorf("series %s holds a secret", series)
			}
		}
	}
}

// waitServing returns once the reloaded gateway answers on a new
// connection: a reload closes the old server's keep-alive connections, and
// a POST racing that close fails with EOF (Caddy's listener hand-over, not
// what these tests are about).
func waitServing(t *testing.T, g *gateway) {
	t.Helper()
	http.DefaultClient.CloseIdleConnections()
	probe := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for attempt := 0; ; attempt++ {
		resp, err := probe.Get(g.URL)
		if err == nil {
			resp.Body.Close()
			http.DefaultClient.CloseIdleConnections()
			return
		}
		if attempt == 20 {
			t.Fatalf("the gateway does not answer after the reload: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
