package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/internal/testservices"
	storeredis "github.com/edgemcp/edgemcp/stores/redis"
)

// sessionlessApproval is a 2026-07-28 tools/call of add-note from a client that
// declares elicitation; answer, when set, is the retry's inputResponses
// and requestState.
func sessionlessApproval(t *testing.T, url, body, answer string) rpcResponse {
	t.Helper()
	s := &rawSession{url: url, version: "2026-07-28"}
	meta := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}`
	params := fmt.Sprintf(`"name":"add-note","arguments":{"body":%q},"_meta":{%s}`, body, meta)
	if answer != "" {
		params += "," + answer
	}
	r, _ := s.postWith(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+params+`}}`,
		map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "add-note"})
	return r
}

// acceptAnswer asks add-note's question at url and returns the retry
// that accepts it.
func acceptAnswer(t *testing.T, url, body string) string {
	t.Helper()
	asked := sessionlessApproval(t, url, body, "")
	var q struct {
		ResultType   string          `json:"resultType"`
		RequestState string          `json:"requestState"`
		Inputs       json.RawMessage `json:"inputRequests"`
	}
	if asked.Error != nil || json.Unmarshal(asked.Result, &q) != nil || q.ResultType != "input_required" || q.RequestState == "" {
		t.Fatalf("the question: %+v %s", asked.Error, asked.Result)
	}
	return fmt.Sprintf(`"inputResponses":{%q:{"action":"accept","content":{}}},"requestState":%q`, approvalInput, q.RequestState)
}

// One accept runs one call, on every node: two gateway nodes (processes
// sharing session_key and a Redis, the cache's) serve a tool under
// `approval required`. The question is asked on node A and accepted; the
// accepted retry runs the INSERT once. The same retry sent again, to A or
// to B (a stateless 2026-07-28 client may reach any node), is refused with
// -32000 and runs nothing.
func TestApprovalOnceAcrossNodes(t *testing.T) {
	db := testDB(t)
	table := testservices.Name("approved")
	execSQL(t, db, fmt.Sprintf("CREATE TABLE %s (id serial PRIMARY KEY, body text NOT NULL)", table))
	t.Cleanup(func() { execSQL(t, db, "DROP TABLE IF EXISTS "+table) })
	nodeCfg := fmt.Sprintf(`	mcp /mcp {
		session_key {env.EDGEMCP_SESSION_KEY}
		cache {
			redis %s
			key_prefix %s
		}
		connector db postgres %q
		tool add-note {
			description "Add a note"
			use db
			statement "INSERT INTO %s (body) VALUES ({{ inputs.body }}) RETURNING id"
			input body string required
			approval required
		}
	}`, testservices.RedisURL(t), testservices.RedisPrefix(t), postgresURL(t), table)
	a, b := startNode(t, "A", nodeCfg), startNode(t, "B", nodeCfg)

	rows := func() int {
		var n int
		if err := db.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	answer := acceptAnswer(t, a.url, "once")
	if r := sessionlessApproval(t, a.url, "once", answer); r.Error != nil {
		t.Fatalf("the accepted call: %+v", r.Error)
	}
	if n := rows(); n != 1 {
		t.Fatalf("%d rows after the accepted call, want 1", n)
	}
	const reused = "approval: the answer was already used for a call: call again without it to be asked again"
	for _, n := range []*node{a, b, b, a} {
		r := sessionlessApproval(t, n.url, "once", answer)
		if r.Error == nil || r.Error.Code != -32000 || r.Error.Message != reused {
			t.Errorf("the answer again at node %s: %+v %s, want -32000 %q", n.name, r.Error, r.Result, reused)
		}
	}
	if n := rows(); n != 1 {
		t.Errorf("%d rows: a used answer ran the write again", n)
	}
	// A new question is a new answer, asked on B and run on A.
	if r := sessionlessApproval(t, a.url, "twice", acceptAnswer(t, b.url, "twice")); r.Error != nil {
		t.Errorf("a second question: %+v", r.Error)
	}
	if n := rows(); n != 2 {
		t.Errorf("%d rows after a second accepted question, want 2", n)
	}
}

// Without a shared Redis the record is the node's: the answer is refused
// again on the node that ran it, through a reload too; every decision is
// audited, the second as "reused".
func TestApprovalOnceOnOneNode(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	cfg := approvalCaddyfile(t, "")
	g := startGateway(t, cfg, withLogFile(logFile))
	answer := acceptAnswer(t, g.URL, "local")
	if r := sessionlessApproval(t, g.URL, "local", answer); r.Error != nil {
		t.Fatalf("the accepted call: %+v", r.Error)
	}
	raw := g.rawSession(t, "2025-11-25")
	if n := noteCount(t, raw); n != "1" {
		t.Fatalf("%s notes, want 1", n)
	}
	if r := sessionlessApproval(t, g.URL, "local", answer); r.Error == nil || r.Error.Code != -32000 {
		t.Errorf("the answer again: %+v %s", r.Error, r.Result)
	}
	if err := g.load(cfg); err != nil {
		t.Fatal(err)
	}
	if r := sessionlessApproval(t, g.URL, "local", answer); r.Error == nil || r.Error.Code != -32000 {
		t.Errorf("the answer again after a reload: %+v %s", r.Error, r.Result)
	}
	if n := noteCount(t, g.rawSession(t, "2025-11-25")); n != "1" {
		t.Errorf("%s notes: a used answer ran the write again", n)
	}
	var decisions []string
	for _, l := range auditLines(t, logFile) {
		decisions = append(decisions, fmt.Sprint(l["decision"]))
	}
	if got := fmt.Sprint(decisions); got != "[approved reused reused]" {
		t.Errorf("audit decisions %s", got)
	}
}

// The Redis the approvals share: rate_limit_redis before the cache's.
func TestApprovalRedisChoice(t *testing.T) {
	for _, tt := range []struct {
		h          Handler
		url, prefx string
	}{
		{Handler{}, "", ""},
		{Handler{Cache: &CacheConfig{Redis: "redis://c"}}, "redis://c", "edgemcp:"},
		{Handler{Cache: &CacheConfig{Redis: "redis://c", KeyPrefix: "p:"}}, "redis://c", "p:"},
		{Handler{Cache: &CacheConfig{Redis: "redis://c"}, RateLimitStore: &RateLimitStoreConfig{Redis: "redis://r"}}, "redis://r", "edgemcp:"},
		{Handler{RateLimitStore: &RateLimitStoreConfig{Redis: "redis://r", Prefix: "rl:"}}, "redis://r", "rl:"},
	} {
		if url, prefix := tt.h.approvalRedis(); url != tt.url || prefix != tt.prefx {
			t.Errorf("%+v %+v: %q %q, want %q %q", tt.h.Cache, tt.h.RateLimitStore, url, prefix, tt.url, tt.prefx)
		}
	}
}

// BenchmarkApprovalSpend is what one approved 2026-07-28 call adds to
// its approval: recording its answer as used, in this node's memory or
// with one SET NX on the Redis the nodes share.
func BenchmarkApprovalSpend(b *testing.B) {
	store, err := storeredis.Open(testservices.RedisURL(b), approvalRedisTimeout)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	for _, s := range []struct {
		name  string
		spent spentApprovals
	}{
		{"local", &localSpent{max: 1 << 30, until: map[string]time.Time{}}},
		{"redis", sharedSpent{store: store, prefix: testservices.RedisPrefix(b)}},
	} {
		i := 0 // nonces differ across the runs of one benchmark too
		b.Run(s.name, func(b *testing.B) {
			for b.Loop() {
				i++
				if first, err := s.spent.spend(context.Background(), strconv.Itoa(i), time.Minute); !first || err != nil {
					b.Fatal(first, err)
				}
			}
		})
	}
}
