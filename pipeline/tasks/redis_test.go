package tasks

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
)

// The tests of tasks on several gateway nodes: each node is a Runner with
// its own Redis client over the real Redis (testservices.RedisKV, the
// KV the store module gives the gateway), under one key prefix; the node
// that dies is a process of its own, killed.

// testRenew is the lease renewal of the test nodes: a dead node's task is
// failed after three of them.
const testRenew = 100 * time.Millisecond

// redisNode is one gateway node on the shared Redis, with its own client.
func redisNode(t *testing.T, prefix string) *Runner {
	t.Helper()
	r := New(testservices.NewRedisKV(t), Config{Prefix: prefix, Renew: testRenew})
	t.Cleanup(r.Close)
	return r
}

// TestTwoNodes: a task made on one node is read on the other, working
// and then completed with its result; the other node's caller who is not
// its creator gets "not found"; a cancel on the node that does not run
// the call stops it on the node that does.
func TestTwoNodes(t *testing.T) {
	prefix := testservices.RedisPrefix(t)
	a, b := redisNode(t, prefix), redisNode(t, prefix)

	work := newBlocked()
	task, err := a.Start(context.Background(), Spec{Tool: "report", Identity: alice, TTL: time.Minute}, work.work)
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Get(context.Background(), task.ID, as(alice))
	status(t, got, err, pipeline.TaskWorking)
	if _, err := b.Get(context.Background(), task.ID, as(bob)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another caller on the other node: %v", err)
	}
	work.release <- json.RawMessage(result)
	done, err := b.Await(context.Background(), task.ID, as(alice))
	status(t, done, err, pipeline.TaskCompleted)
	if string(done.Result) != result {
		t.Fatalf("result %s", done.Result)
	}

	slow := newBlocked()
	task, err = a.Start(context.Background(), Spec{Tool: "report", Identity: alice, TTL: time.Minute}, slow.work)
	if err != nil {
		t.Fatal(err)
	}
	<-slow.started
	got, err = b.Cancel(context.Background(), task.ID, as(alice))
	status(t, got, err, pipeline.TaskCancelled)
	if cause := <-slow.ended; !errors.Is(cause, errEnded) {
		t.Fatalf("the call on the running node ended with %v, want the other node's cancel", cause)
	}
	got, err = a.Get(context.Background(), task.ID, as(alice))
	status(t, got, err, pipeline.TaskCancelled)
	if s := b.Stats(); s.Cancelled != 1 || s.Created != 0 {
		t.Fatalf("the cancelling node's stats %+v", s)
	}
	waitFor(t, func() bool { return a.Stats().Running == 0 })
	if s := a.Stats(); s.Created != 2 || s.Completed != 1 || s.Cancelled != 0 {
		t.Fatalf("the running node's stats %+v", s)
	}
}

// nodeEnv makes this test binary a gateway node (TestMain): it starts a
// task whose call never ends, prints the task's id and waits to be killed.
const nodeEnv = "EDGEMCP_TASKS_TEST_NODE"

// TestKilledNode: the node running a task is killed (SIGKILL: no outcome
// written, no lease renewed). The other node reads the task working, then
// failed once the lease lapsed, never working for ever.
func TestKilledNode(t *testing.T) {
	url, prefix := testservices.RedisURL(t), testservices.RedisPrefix(t)
	other := redisNode(t, prefix)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), nodeEnv+"="+url+" "+prefix)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the node printed no task: %v", err)
	}
	id := strings.TrimSpace(line)

	got, err := other.Get(context.Background(), id, as(alice))
	status(t, got, err, pipeline.TaskWorking)
	// Several renewals pass: the live node holds its lease.
	deadline := time.Now().Add(5 * testRenew)
	for time.Now().Before(deadline) {
		got, err = other.Get(context.Background(), id, as(alice))
		status(t, got, err, pipeline.TaskWorking)
		time.Sleep(testRenew / 2)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	var end *pipeline.Task
	waitFor(t, func() bool {
		end, err = other.Get(context.Background(), id, as(alice))
		return err != nil || end.Status != pipeline.TaskWorking
	})
	status(t, end, err, pipeline.TaskFailed)
	if end.Message != msgLapsed || end.Error == nil || end.Error.Code != pipeline.CodeStageFailed {
		t.Fatalf("the dead node's task %+v", end)
	}
	if s := other.Stats(); s.Failed != 1 {
		t.Fatalf("stats %+v: the node that found the lapse counts it", s)
	}
}

// runNode is the killed node of TestKilledNode.
func runNode(spec string) {
	url, prefix, _ := strings.Cut(spec, " ")
	kv, err := testservices.OpenRedisKV(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	r := New(kv, Config{Prefix: prefix, Renew: testRenew})
	task, err := r.Start(context.Background(), Spec{Tool: "report", Identity: alice, TTL: time.Minute},
		func(ctx context.Context) (json.RawMessage, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println(task.ID)
	select {}
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(nodeEnv); spec != "" {
		runNode(spec)
	}
	os.Exit(testservices.Main(m))
}
