package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/script"
	"github.com/edgemcp/edgemcp/pipeline/sqlagent"
)

// interceptorJS rewrites a query on items to the columns an agent may see
// and the caller's own page, refuses anything that mentions ssn, and
// returns a write for "sneaky" (which the guard must still refuse).
const interceptorJS = `export default function ({ sql, params, caller, tool }) {
	if (/ssn/i.test(sql)) throw new Error("ssn is not for agents");
	if (sql === "sneaky") return "DELETE FROM %s.orders";
	const m = /^SELECT \* FROM (\S+)\.items$/.exec(sql);
	if (m) return { sql: "SELECT id, name, $1::text AS asked_by, $2::text AS via FROM " + m[1] + ".items WHERE id <= $3 ORDER BY id", params: [caller.subject, tool, 2] };
}
`

// TestAgentInterceptor: the interceptor sees {sql, params, caller, tool}
// first; it rewrites one statement (with params), refuses another with
// its message, and what it returns still passes the guard and the
// database.
func TestAgentInterceptor(t *testing.T) {
	f := newAgentFixture(t)
	file := filepath.Join(t.TempDir(), "intercept.js")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(interceptorJS, "%s", f.schema)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := script.Load(file, script.Options{Name: "db_query"})
	if err != nil {
		t.Fatal(err)
	}
	c := open(t, postgres.Config{})
	cfg := f.config(c)
	cfg.Interceptor = script.InputMapper{Script: s}
	e := conntest.AgentEngine(t, cfg)
	ctx := conntest.AsCaller(context.Background(), &pipeline.Identity{Subject: "alice"})

	got := conntest.MustCall(ctx, t, e, "db_query", `{"sql":"SELECT * FROM `+f.schema+`.items"}`)
	if want := `{"columns":["id","name","asked_by","via"],"rows":[[1,"item 1","alice","db_query"],[2,"item 2","alice","db_query"]],"row_count":2,"truncated":false}`; got != want {
		t.Errorf("rewritten:\n got %s\nwant %s", got, want)
	}
	_, perr := conntest.CallTool(ctx, t, e, "db_query", `{"sql":"SELECT ssn FROM `+f.schema+`.secrets"}`)
	if perr == nil || perr.Stage != sqlagent.StageInterceptor || !strings.Contains(perr.Message, "ssn is not for agents") {
		t.Errorf("refused: %v, want the interceptor's message", perr)
	}
	before := f.state(t)
	_, perr = conntest.CallTool(ctx, t, e, "db_query", `{"sql":"sneaky"}`)
	if perr == nil || perr.Stage != sqlagent.StageGuard {
		t.Errorf("a write the interceptor returned: %v, want the guard's refusal", perr)
	}
	if after := f.state(t); after != before {
		t.Errorf("the database changed:\nbefore %s\nafter  %s", before, after)
	}
	if got := conntest.MustCall(ctx, t, e, "db_query", `{"sql":"SELECT count(*) FROM `+f.schema+`.orders"}`); !strings.Contains(got, `[[30]]`) {
		t.Errorf("a statement the interceptor keeps: %s", got)
	}
}

// recorder is an Observer that keeps the outbound calls it sees.
type recorder struct{ queries []pipeline.QueryInfo }

func (r *recorder) Stage(ctx context.Context, _ *pipeline.Call, _ pipeline.Stage) (context.Context, func(error)) {
	return ctx, func(error) {}
}

func (r *recorder) Query(ctx context.Context, _ *pipeline.Call, q pipeline.QueryInfo) (context.Context, func(error)) {
	r.queries = append(r.queries, q)
	return ctx, func(error) {}
}

// TestAgentTelemetryHoldsNoStatement: an agent's statement may hold
// values (a literal email, a name), so the outbound call telemetry sees
// carries a fixed text in its place.
func TestAgentTelemetryHoldsNoStatement(t *testing.T) {
	f := newAgentFixture(t)
	c := open(t, postgres.Config{})
	e := conntest.AgentEngine(t, f.config(c))
	rec := &recorder{}
	ctx := pipeline.WithObserver(context.Background(), rec)
	conntest.MustCall(ctx, t, e, "db_query", `{"sql":"SELECT id FROM `+f.schema+`.items WHERE name = 'alice@example.com'"}`)
	conntest.MustCall(ctx, t, e, "db_explain", `{"sql":"SELECT id FROM `+f.schema+`.items WHERE name = 'alice@example.com'"}`)
	if len(rec.queries) != 2 {
		t.Fatalf("telemetry saw %d queries, want 2", len(rec.queries))
	}
	for _, q := range rec.queries {
		if strings.Contains(q.Statement, "alice") || q.System != "postgres" {
			t.Errorf("telemetry saw %+v", q)
		}
	}
}
