package postgres_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
	"github.com/edgemcp/edgemcp/pipeline/tasks"
)

// sleepEngine is an engine with one tool, sleep: `SELECT pg_sleep(...)`
// on a real connector, behind an auth stage that verifies alice, and the
// statement's marker for pg_stat_activity.
func sleepEngine(t *testing.T) (*pipeline.Engine, string) {
	t.Helper()
	marker := testservices.Name("task_sleep")
	st, err := sqltemplate.Compile("SELECT pg_sleep({{ inputs.seconds }}), 42 AS answer /* "+marker+" */",
		sqltemplate.Options{Dialect: sqltemplate.Postgres, Inputs: map[string]sqltemplate.Param{"seconds": {}}})
	if err != nil {
		t.Fatal(err)
	}
	tool := &pipeline.Tool{Name: "sleep", Auth: verified{Provider: "sso", Subject: "alice"},
		Executor: &pipeline.DBExecutor{Connector: open(t, postgres.Config{MaxConns: 2}), Statement: st}}
	e, err := pipeline.NewEngine([]*pipeline.Tool{tool})
	if err != nil {
		t.Fatal(err)
	}
	return e, marker
}

// verified is an auth stage that verifies its identity.
type verified pipeline.Identity

func (v verified) Authorize(context.Context, *pipeline.Call) (*pipeline.Identity, error) {
	id := pipeline.Identity(v)
	return &id, nil
}

// startSleep prepares sleep(seconds) as the request would, and starts
// its execution as a task on r: the work is the rest of the pipeline, its
// rows encoded as the result.
func startSleep(t *testing.T, e *pipeline.Engine, r *tasks.Runner, seconds float64) *pipeline.Task {
	t.Helper()
	call, _, perr := e.Prepare(context.Background(), "sleep", map[string]any{"seconds": seconds}, nil)
	if perr != nil {
		t.Fatal(perr)
	}
	task, err := r.Start(context.Background(), tasks.Spec{Tool: "sleep", Identity: call.Identity, TTL: time.Minute},
		func(ctx context.Context) (json.RawMessage, error) {
			res, perr := e.Run(ctx, call)
			if perr != nil {
				return nil, perr
			}
			return json.Marshal(res.Value)
		})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func caller(id *pipeline.Identity) tasks.Who {
	return func(string) (*pipeline.Identity, bool) { return id, true }
}

// TestSleepAsTask: a pg_sleep statement run as a task, on two gateway
// nodes sharing Redis. A short one completes with its rows, read on the
// other node. A long one is cancelled from the node that does not run it:
// the cancel reaches the running node through Redis, its statement is
// cancelled on the server (no pg_sleep left in pg_stat_activity), and the
// task ends cancelled on both nodes; another caller never reads it.
func TestSleepAsTask(t *testing.T) {
	admin, err := pgxpool.New(context.Background(), testservices.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	prefix := testservices.RedisPrefix(t)
	node := func() *tasks.Runner {
		r := tasks.New(testservices.NewRedisKV(t), tasks.Config{Prefix: prefix, Renew: 100 * time.Millisecond})
		t.Cleanup(r.Close)
		return r
	}
	a, b := node(), node()
	e, marker := sleepEngine(t)
	alice := &pipeline.Identity{Provider: "sso", Subject: "alice"}

	short := startSleep(t, e, a, 0.1)
	done, err := b.Await(context.Background(), short.ID, caller(alice))
	if err != nil || done.Status != pipeline.TaskCompleted || !strings.Contains(string(done.Result), `"answer":42`) {
		t.Fatalf("short sleep: %+v %v", done, err)
	}

	long := startSleep(t, e, a, 60)
	if !waitActive(t, admin, marker, true, 10*time.Second) {
		t.Fatal("the task's pg_sleep never showed up as active")
	}
	if _, err := b.Get(context.Background(), long.ID, caller(&pipeline.Identity{Provider: "sso", Subject: "bob"})); err != tasks.ErrNotFound {
		t.Fatalf("another caller: %v", err)
	}
	got, err := b.Cancel(context.Background(), long.ID, caller(alice))
	if err != nil || got.Status != pipeline.TaskCancelled {
		t.Fatalf("cancel: %+v %v", got, err)
	}
	if !waitActive(t, admin, marker, false, 10*time.Second) {
		t.Fatal("pg_sleep still runs after the task was cancelled")
	}
	for _, r := range []*tasks.Runner{a, b} {
		if got, err := r.Get(context.Background(), long.ID, caller(alice)); err != nil || got.Status != pipeline.TaskCancelled {
			t.Fatalf("after cancel: %+v %v", got, err)
		}
	}
}
