package redis

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/guardrail"
)

// TestRecordsAgainstRedis: GetMany reads present and absent keys in
// order; Incr counts and sets the expiry.
func TestRecordsAgainstRedis(t *testing.T) {
	s := open(t, testservices.RedisURL(t))
	ctx := context.Background()
	key := fmt.Sprintf("records-test:%d:", time.Now().UnixNano())
	t.Cleanup(func() { _ = s.client.Del(context.Background(), key+"a", key+"n").Err() })
	if err := s.Set(ctx, key+"a", []byte("x"), time.Minute); err != nil {
		t.Fatal(err)
	}
	vals, err := s.GetMany(ctx, key+"missing", key+"a")
	if err != nil || len(vals) != 2 || vals[0] != nil || string(vals[1]) != "x" {
		t.Fatalf("GetMany: %q %v", vals, err)
	}
	for want := int64(1); want <= 3; want++ {
		if n, err := s.Incr(ctx, key+"n", 2*time.Second); err != nil || n != want {
			t.Fatalf("Incr: %d %v, want %d", n, err, want)
		}
	}
	if ttl, err := s.client.PTTL(ctx, key+"n").Result(); err != nil || ttl <= 0 || ttl > 2*time.Second {
		t.Fatalf("counter ttl %s %v", ttl, err)
	}
}

// TestGuardrailsAcrossNodes: two gateway nodes, each with its own
// guardrail and Redis client over the same Redis, hold one record: a
// session's success on one node admits its guarded call on the other,
// and an after rule triggered on one refuses on the other; another
// session is not admitted by it.
func TestGuardrailsAcrossNodes(t *testing.T) {
	url := testservices.RedisURL(t)
	node := func() *pipeline.Engine {
		store, err := guardrail.NewShared(open(t, url))
		if err != nil {
			t.Fatal(err)
		}
		g, err := guardrail.New(guardrail.Config{
			Store:    store,
			TTL:      time.Minute, // the shared Redis keeps no test's record for long
			Requires: []guardrail.Requires{{Tool: "db_query", Needs: "db_describe_table", WithinCalls: 3}},
			After:    []guardrail.After{{Tool: "db_query", Deny: []string{"send_*"}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		var tools []*pipeline.Tool
		for _, name := range []string{"db_query", "db_describe_table", "send_mail"} {
			tools = append(tools, &pipeline.Tool{Name: name, Executor: pipeline.ExecutorFunc(func(context.Context, *pipeline.Call) (*pipeline.Result, error) {
				return &pipeline.Result{Value: name}, nil
			})})
		}
		e, err := pipeline.NewEngine(tools, pipeline.WithSequencer(g))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	n1, n2 := node(), node()
	stamp := time.Now().UnixNano()
	a := &pipeline.RequestInfo{Session: fmt.Sprintf("A-%d", stamp)}
	b := &pipeline.RequestInfo{Session: fmt.Sprintf("B-%d", stamp)}
	call := func(e *pipeline.Engine, info *pipeline.RequestInfo, tool string) *pipeline.Error {
		_, perr := e.Call(context.Background(), tool, nil, info)
		return perr
	}
	if perr := call(n1, a, "db_query"); perr == nil || !strings.Contains(perr.Message, "call db_describe_table first") {
		t.Fatalf("A before describe: %v", perr)
	}
	if perr := call(n1, a, "db_describe_table"); perr != nil {
		t.Fatal(perr)
	}
	if perr := call(n2, b, "db_query"); perr == nil {
		t.Error("B admitted by A's describe")
	}
	if perr := call(n2, a, "send_mail"); perr != nil {
		t.Errorf("A's send before its query: %v", perr)
	}
	if perr := call(n2, a, "db_query"); perr != nil {
		t.Errorf("A on node 2 after its describe on node 1: %v", perr)
	}
	if perr := call(n1, a, "send_mail"); perr == nil || !strings.Contains(perr.Message, "db_query has run in it") {
		t.Errorf("A's send on node 1 after its query on node 2: %v", perr)
	}
	if perr := call(n1, b, "send_mail"); perr != nil {
		t.Errorf("B's send: %v", perr)
	}
	// within 3 calls, counted across nodes: describe is among A's last
	// three successes (describe, send, query) once more, then no more.
	if perr := call(n1, a, "db_query"); perr != nil {
		t.Errorf("A's query, describe among its last 3 calls: %v", perr)
	}
	if perr := call(n2, a, "db_query"); perr == nil || !strings.Contains(perr.Message, "within 3 calls") {
		t.Errorf("A's query after 3 calls on two nodes: %v", perr)
	}
}
