package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

var (
	alice = &pipeline.Identity{Provider: "sso", Subject: "alice", Claims: map[string]any{"scope": "a"}}
	bob   = &pipeline.Identity{Provider: "sso", Subject: "bob"}
)

// as is the Who of a request whose caller the provider verifies as id.
func as(id *pipeline.Identity) Who {
	return func(provider string) (*pipeline.Identity, bool) {
		if id == nil || id.Provider != provider {
			return nil, false
		}
		return id, true
	}
}

func newRunner(t *testing.T, kv KV, cfg Config) *Runner {
	t.Helper()
	r := New(kv, cfg)
	t.Cleanup(r.Close)
	return r
}

func memory() *Memory { return NewMemory(1000, 1<<20) }

// blocked is work that waits for release or its context, and reports its
// context's cause when it ends.
type blocked struct {
	started chan struct{}
	release chan json.RawMessage
	ended   chan error
}

func newBlocked() *blocked {
	return &blocked{started: make(chan struct{}), release: make(chan json.RawMessage, 1), ended: make(chan error, 1)}
}

func (b *blocked) work(ctx context.Context) (json.RawMessage, error) {
	close(b.started)
	select {
	case res := <-b.release:
		b.ended <- nil
		return res, nil
	case <-ctx.Done():
		b.ended <- context.Cause(ctx)
		return nil, ctx.Err()
	}
}

func status(t *testing.T, task *pipeline.Task, err error, want pipeline.TaskStatus) *pipeline.Task {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if task.Status != want {
		t.Fatalf("status %s (%s), want %s", task.Status, task.Message, want)
	}
	return task
}

const result = `{"content":[{"type":"text","text":"[1]"}],"structuredContent":{"results":[1]}}`

// TestTaskCompletes: a task is working while its call runs, and completed
// with the call's result once it ends; the request that made it may end
// at once without stopping the call, whose context keeps its values.
func TestTaskCompletes(t *testing.T) {
	r := newRunner(t, memory(), Config{})
	type key struct{}
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "span"))
	b := newBlocked()
	values := make(chan any, 1)
	task, err := r.Start(ctx, Spec{Tool: "report", Identity: alice, TTL: time.Hour}, func(ctx context.Context) (json.RawMessage, error) {
		values <- ctx.Value(key{})
		return b.work(ctx)
	})
	status(t, task, err, pipeline.TaskWorking)
	if len(task.ID) < 22 || task.TTL != time.Hour || task.PollInterval != defaultPollInterval {
		t.Fatalf("task %+v", task)
	}
	cancel() // the request that made the task is over
	<-b.started
	if v := <-values; v != "span" {
		t.Fatalf("the call lost its context's values: %v", v)
	}
	got, err := r.Get(context.Background(), task.ID, as(alice))
	status(t, got, err, pipeline.TaskWorking)
	if s := r.Stats(); s.Created != 1 || s.Running != 1 {
		t.Fatalf("stats %+v", s)
	}

	b.release <- json.RawMessage(result)
	done, err := r.Await(context.Background(), task.ID, as(alice))
	status(t, done, err, pipeline.TaskCompleted)
	if string(done.Result) != result || done.Updated.Before(done.Created) {
		t.Fatalf("completed task %+v", done)
	}
	if s := r.Stats(); s.Completed != 1 || s.Running != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestTaskFails: a call that fails fails its task with the JSON-RPC error
// the plain call would have had (no text the pipeline did not make
// safe); a result past max_result_size fails it too.
func TestTaskFails(t *testing.T) {
	r := newRunner(t, memory(), Config{MaxResult: 16})
	cases := []struct {
		name string
		work Work
		want pipeline.TaskError
	}{
		{"stage failure", func(context.Context) (json.RawMessage, error) {
			return nil, pipeline.Fail(pipeline.StageExecution, nil, "query failed: division by zero")
		}, pipeline.TaskError{Code: -32000, Message: "execution: query failed: division by zero"}},
		{"unshaped error", func(context.Context) (json.RawMessage, error) {
			return nil, errors.New("dial 10.1.2.3: password=hunter2")
		}, pipeline.TaskError{Code: -32000, Message: "execution: failed"}},
		{"result too large", func(context.Context) (json.RawMessage, error) {
			return json.RawMessage(result), nil
		}, pipeline.TaskError{Code: -32000, Message: "execution: the result is larger than max_result_size (16 bytes)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			task, err := r.Start(context.Background(), Spec{Tool: "t", Identity: alice, TTL: time.Hour}, c.work)
			if err != nil {
				t.Fatal(err)
			}
			done, err := r.Await(context.Background(), task.ID, as(alice))
			status(t, done, err, pipeline.TaskFailed)
			if done.Error == nil || done.Error.Code != c.want.Code || done.Error.Message != c.want.Message || done.Result != nil {
				t.Fatalf("failed task %+v error %+v, want %+v", done, done.Error, c.want)
			}
		})
	}
	if s := r.Stats(); s.Failed != int64(len(cases)) {
		t.Fatalf("stats %+v", s)
	}
}

// TestCancel: a cancel ends the task cancelled and stops its call (its
// context ends); the task keeps that outcome, a second cancel is refused
// as terminal, and the call's late end changes nothing.
func TestCancel(t *testing.T) {
	r := newRunner(t, memory(), Config{})
	b := newBlocked()
	task, err := r.Start(context.Background(), Spec{Tool: "t", Identity: alice, TTL: time.Hour}, b.work)
	if err != nil {
		t.Fatal(err)
	}
	<-b.started
	got, err := r.Cancel(context.Background(), task.ID, as(alice))
	status(t, got, err, pipeline.TaskCancelled)
	if cause := <-b.ended; !errors.Is(cause, errCancelled) {
		t.Fatalf("the call ended with %v, want the cancel", cause)
	}
	got, err = r.Cancel(context.Background(), task.ID, as(alice))
	if !errors.Is(err, ErrTerminal) || got == nil || got.Status != pipeline.TaskCancelled {
		t.Fatalf("second cancel: %v %v", got, err)
	}
	done, err := r.Await(context.Background(), task.ID, as(alice))
	status(t, done, err, pipeline.TaskCancelled)
	if s := r.Stats(); s.Cancelled != 1 || s.Completed+s.Failed != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestOwnership: a task is its creator's. Another caller, a caller the
// task's provider does not verify, and a caller of another provider with
// the same subject get what an unknown id gets, for every operation; an
// anonymous caller's task is any anonymous caller's who holds its id.
func TestOwnership(t *testing.T) {
	r := newRunner(t, memory(), Config{})
	b := newBlocked()
	task, err := r.Start(context.Background(), Spec{Tool: "t", Identity: alice, TTL: time.Hour}, b.work)
	if err != nil {
		t.Fatal(err)
	}
	otherProvider := &pipeline.Identity{Provider: "keys", Subject: "alice"}
	for _, who := range []Who{as(bob), as(nil), as(otherProvider), nil} {
		for _, op := range []func(context.Context, string, Who) (*pipeline.Task, error){r.Get, r.Cancel, r.Await} {
			if got, err := op(context.Background(), task.ID, who); !errors.Is(err, ErrNotFound) || got != nil {
				t.Fatalf("another caller got %v %v", got, err)
			}
		}
	}
	if _, err := r.Get(context.Background(), "no-such-task", as(alice)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	got, err := r.Get(context.Background(), task.ID, as(alice))
	status(t, got, err, pipeline.TaskWorking) // no one else's cancel reached it

	anon, err := r.Start(context.Background(), Spec{Tool: "t", TTL: time.Hour}, func(context.Context) (json.RawMessage, error) {
		return json.RawMessage(result), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	done, err := r.Await(context.Background(), anon.ID, as(nil))
	status(t, done, err, pipeline.TaskCompleted)
}

// TestTTL: the task's ttl bounds the call as well as the outcome: a call
// still running at its ttl is stopped and the task is gone. A client's
// shorter ttl is taken, a longer one is not.
func TestTTL(t *testing.T) {
	r := newRunner(t, memory(), Config{})
	b := newBlocked()
	task, err := r.Start(context.Background(), Spec{Tool: "t", Identity: alice, TTL: 300 * time.Millisecond}, b.work)
	if err != nil {
		t.Fatal(err)
	}
	if cause := <-b.ended; !errors.Is(cause, errExpired) {
		t.Fatalf("the call ended with %v, want the ttl", cause)
	}
	waitFor(t, func() bool {
		_, err := r.Get(context.Background(), task.ID, as(alice))
		return errors.Is(err, ErrNotFound)
	})
	waitFor(t, func() bool { return r.Stats().Expired == 1 })

	short, _ := r.Start(context.Background(), Spec{Tool: "t", Identity: alice, TTL: time.Hour, Requested: 5 * time.Second}, newBlocked().work)
	long, _ := r.Start(context.Background(), Spec{Tool: "t", Identity: alice, TTL: time.Hour, Requested: 5 * time.Hour}, newBlocked().work)
	tiny, _ := r.Start(context.Background(), Spec{Tool: "t", Identity: alice, TTL: time.Hour, Requested: time.Millisecond}, newBlocked().work)
	if short.TTL != 5*time.Second || long.TTL != time.Hour || tiny.TTL != minTTL {
		t.Fatalf("ttls %v %v %v", short.TTL, long.TTL, tiny.TTL)
	}
}

// TestLeaseLapse: a task whose node stopped renewing its lease (killed,
// without writing an outcome) reads failed once the lease lapsed, never
// working; the outcome is written once and counted by the node that
// wrote it.
func TestLeaseLapse(t *testing.T) {
	clk := newClock()
	kv := memory()
	kv.now = clk.now
	r := newRunner(t, kv, Config{Renew: time.Second})
	r.store.now = clk.now
	// A task as a node that then died left it: record and lease, no
	// runner renewing.
	rec := &record{Owner: Owner(alice), Provider: alice.Provider, Tool: "t", Created: clk.now(), TTL: time.Hour, Poll: time.Second}
	if err := r.store.create(context.Background(), "dead", rec, r.lease(), "node-a"); err != nil {
		t.Fatal(err)
	}
	got, err := r.Get(context.Background(), "dead", as(alice))
	status(t, got, err, pipeline.TaskWorking)
	clk.advance(r.lease())
	got, err = r.Get(context.Background(), "dead", as(alice))
	status(t, got, err, pipeline.TaskFailed)
	if got.Message != msgLapsed || got.Error == nil || !strings.Contains(got.Error.Message, msgLapsed) {
		t.Fatalf("lapsed task %+v", got)
	}
	got, err = r.Get(context.Background(), "dead", as(alice))
	status(t, got, err, pipeline.TaskFailed)
	if s := r.Stats(); s.Failed != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// TestClose: a node that shuts down stops its calls, which end failed
// (not left working), and makes no more tasks.
func TestClose(t *testing.T) {
	r := New(memory(), Config{})
	b := newBlocked()
	task, err := r.Start(context.Background(), Spec{Tool: "t", Identity: alice, TTL: time.Hour}, b.work)
	if err != nil {
		t.Fatal(err)
	}
	<-b.started
	r.Close()
	if cause := <-b.ended; !errors.Is(cause, errStopped) {
		t.Fatalf("the call ended with %v", cause)
	}
	got, err := r.Get(context.Background(), task.ID, as(alice))
	status(t, got, err, pipeline.TaskFailed)
	if got.Message != msgStopped {
		t.Fatalf("message %q", got.Message)
	}
	if _, err := r.Start(context.Background(), Spec{Tool: "t", TTL: time.Hour}, b.work); err == nil {
		t.Fatal("a closed runner made a task")
	}
}

// TestStoreFull: a Memory with no room refuses a new task (the call can
// be refused); it never drops a live one to make room.
func TestStoreFull(t *testing.T) {
	r := newRunner(t, NewMemory(4, 1<<20), Config{})
	first, err := r.Start(context.Background(), Spec{Tool: "t", TTL: time.Hour}, newBlocked().work)
	if err != nil {
		t.Fatal(err)
	}
	r.Start(context.Background(), Spec{Tool: "t", TTL: time.Hour}, newBlocked().work)
	if _, err := r.Start(context.Background(), Spec{Tool: "t", TTL: time.Hour}, newBlocked().work); !errors.Is(err, ErrFull) {
		t.Fatalf("a third task in room for two: %v", err)
	}
	got, err := r.Get(context.Background(), first.ID, as(nil))
	status(t, got, err, pipeline.TaskWorking)
	if s := r.Stats(); s.Running != 2 {
		t.Fatalf("stats %+v: the refused task is not running", s)
	}
}

// waitFor polls cond until it holds, failing the test after a while.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNoRoomForResult: a result the memory has no room for fails its task
// with a message saying so; it is not left working.
func TestNoRoomForResult(t *testing.T) {
	r := newRunner(t, NewMemory(100, 600), Config{})
	big := json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("x", 300) + `"}]}`)
	task, err := r.Start(context.Background(), Spec{Tool: "t", TTL: time.Hour}, func(context.Context) (json.RawMessage, error) { return big, nil })
	if err != nil {
		t.Fatal(err)
	}
	done, err := r.Await(context.Background(), task.ID, as(nil))
	status(t, done, err, pipeline.TaskFailed)
	if !strings.Contains(done.Message, "no room for the result") {
		t.Fatalf("message %q", done.Message)
	}
}
