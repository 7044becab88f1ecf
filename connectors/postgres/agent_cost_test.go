package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqlagent"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// bigTables creates two analyzed tables of n rows with a primary key.
func bigTables(t testing.TB, n int) string {
	t.Helper()
	admin := testservices.PostgresConn(t)
	s := testservices.PostgresSchema(t, admin)
	for _, table := range []string{"a", "b"} {
		testservices.PostgresExec(t, admin, fmt.Sprintf("CREATE TABLE %s.%s (id int PRIMARY KEY, v text NOT NULL)", s, table))
		testservices.PostgresExec(t, admin, fmt.Sprintf("INSERT INTO %s.%s SELECT g, 'value ' || g FROM generate_series(1, %d) g", s, table, n))
		testservices.PostgresExec(t, admin, fmt.Sprintf("ANALYZE %s.%s", s, table))
	}
	return s
}

// TestAgentCostGuard: with max_cost or max_rows_estimate the plan is
// read before the statement runs; a cross join of two large tables is
// refused with the estimate and the limit in the message, an indexed
// lookup runs.
func TestAgentCostGuard(t *testing.T) {
	s := bigTables(t, 20000)
	c := open(t, postgres.Config{MaxConns: 1})
	cross := conntest.JSONArgs(t, map[string]any{"sql": "SELECT count(*) FROM " + s + ".a, " + s + ".b WHERE a.v < b.v"})
	lookup := conntest.JSONArgs(t, map[string]any{"sql": "SELECT v FROM " + s + ".a WHERE id = $1", "params": []any{42}})
	for _, tc := range []struct {
		name  string
		cfg   sqlagent.Config
		limit string
	}{
		{"max_cost", sqlagent.Config{MaxCost: 10000}, "over max_cost 10000"},
		{"max_rows_estimate", sqlagent.Config{MaxRowsEstimate: 100000}, "over max_rows_estimate 100000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Prefix, cfg.DB, cfg.Dialect = "db", c, sqltemplate.Postgres
			e := conntest.AgentEngine(t, cfg)
			_, perr := conntest.CallTool(context.Background(), t, e, "db_query", cross)
			if perr == nil || perr.Code != pipeline.CodeStageFailed || perr.Stage != sqlagent.StageCost || !strings.Contains(perr.Message, tc.limit) || !strings.Contains(perr.Message, "the planner estimates ") {
				t.Fatalf("cross join: %v, want the cost guard's refusal naming the estimate and %q", perr, tc.limit)
			}
			t.Log(perr)
			if got := conntest.MustCall(context.Background(), t, e, "db_query", lookup); got != `{"columns":["v"],"rows":[["value 42"]],"row_count":1,"truncated":false}` {
				t.Errorf("indexed lookup: %s", got)
			}
			// The refused statement's READ ONLY transaction was ended: the
			// connection's next statement (the connector is not read_only)
			// runs in a read-write one of its own.
			if got := scalar(t, c, "SELECT current_setting('transaction_read_only')"); got != "off" {
				t.Errorf("transaction_read_only after a refusal: %v, want off", got)
			}
		})
	}
}

// BenchmarkAgentQuery: an agent's _query against a declared tool with
// the same statement (a point lookup on a 10k-row table), both through
// the engine on a read_only connector, and the added cost of the cost
// guard's EXPLAIN (one more round trip and the planning). Run by hand:
//
//	go test ./connectors/postgres -run '^$' -bench BenchmarkAgentQuery -benchtime=2s
func BenchmarkAgentQuery(b *testing.B) {
	const n = 10000
	s := bigTables(b, n)
	c := open(b, postgres.Config{ReadOnly: true, MaxConns: 4})
	sql := "SELECT id, v FROM " + s + ".a WHERE id = $1"
	st, err := sqltemplate.Compile("SELECT id, v FROM "+s+".a WHERE id = {{ inputs.id }}", sqltemplate.Options{Dialect: sqltemplate.Postgres, Inputs: map[string]sqltemplate.Param{"id": {}}})
	if err != nil {
		b.Fatal(err)
	}
	id, err := pipeline.NewInput(pipeline.InputSpec{Name: "id", Type: "int", Required: true})
	if err != nil {
		b.Fatal(err)
	}
	inputs, err := pipeline.NewInputSet([]*pipeline.Input{id})
	if err != nil {
		b.Fatal(err)
	}
	declared, err := pipeline.NewEngine([]*pipeline.Tool{{Name: "get", Inputs: inputs, Executor: &pipeline.DBExecutor{Connector: c, Statement: st}}})
	if err != nil {
		b.Fatal(err)
	}
	agent := func(cfg sqlagent.Config) *pipeline.Engine {
		cfg.Prefix, cfg.DB, cfg.Dialect = "db", c, sqltemplate.Postgres
		return conntest.AgentEngine(b, cfg)
	}
	run := func(b *testing.B, e *pipeline.Engine, tool string, args func(id int64) map[string]any) {
		ctx := context.Background()
		info := &pipeline.RequestInfo{}
		for b.Loop() {
			res, perr := e.Call(ctx, tool, args(rand.Int64N(n)+1), info)
			if perr != nil {
				b.Fatal(perr)
			}
			if res == nil {
				b.Fatal("no result")
			}
		}
	}
	b.Run("declared", func(b *testing.B) {
		run(b, declared, "get", func(id int64) map[string]any { return map[string]any{"id": id} })
	})
	query := func(id int64) map[string]any { return map[string]any{"sql": sql, "params": []any{id}} }
	b.Run("agent_query", func(b *testing.B) { run(b, agent(sqlagent.Config{}), "db_query", query) })
	b.Run("agent_query+max_cost", func(b *testing.B) { run(b, agent(sqlagent.Config{MaxCost: 1000}), "db_query", query) })
}
