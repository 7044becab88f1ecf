package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Gateway tasks (docs/tasks.md) end to end: a Postgres pg_sleep tool
// called as a task by mcp-go's client on 2025-11-25, polled, its result
// fetched, cancelled with its statement stopped on the server; a second
// JWT subject cannot see the first one's task.

// tasksCaddyfile declares a pg_sleep tool that may run as a task, one that
// runs only as one and one that never does; marker tags their statements
// so that pg_stat_activity finds this test's statements only. extra goes
// in the mcp block.
func tasksCaddyfile(t *testing.T, marker, extra string) string {
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		%s
		connector main postgres %s {
			statement_timeout 60s
		}
		tool slow {
			description "Sleeps, then says so"
			use main
			statement "SELECT '%s' AS tag, pg_sleep({{ inputs.seconds }}) IS NOT NULL AS slept"
			input seconds float required
			task optional ttl 10m
		}
		tool report {
			description "A report that only runs as a task"
			use main
			statement "SELECT '%s' AS tag, 42 AS answer"
			task required
		}
		tool quick {
			description "Never a task"
			use main
			statement "SELECT 1 AS one"
		}
	}
}`, extra, postgresURL(t), marker, marker)
}

// legacyClient is mcp-go's client on a 2025-11-25 session, sending header.
func legacyClient(t *testing.T, url string, header map[string]string) *client.Client {
	t.Helper()
	trans, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(header))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(trans, client.WithLegacyProtocolOnly())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = "2025-11-25"
	req.Params.ClientInfo = mcp.Implementation{Name: "edgemcp-tasks-test", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if res.ProtocolVersion != "2025-11-25" {
		t.Fatalf("negotiated %s", res.ProtocolVersion)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// callAsTask sends a task-augmented tools/call through c's transport
// (mcp-go's CallTool cannot read a task handle) and returns the response.
func callAsTask(t *testing.T, c *client.Client, id int64, name string, args map[string]any, task map[string]any) *transport.JSONRPCResponse {
	t.Helper()
	params := map[string]any{"name": name, "arguments": args}
	if task != nil {
		params["task"] = task
	}
	res, err := c.GetTransport().SendRequest(context.Background(), transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Method: string(mcp.MethodToolsCall), Params: params})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// created reads the task handle of a 2025-11-25 CreateTaskResult.
func created(t *testing.T, res *transport.JSONRPCResponse) mcp.Task {
	t.Helper()
	if res.Error != nil {
		t.Fatalf("tools/call as a task: %d %s", res.Error.Code, res.Error.Message)
	}
	var out struct {
		Task *mcp.Task `json:"task"`
	}
	if err := json.Unmarshal(res.Result, &out); err != nil || out.Task == nil {
		t.Fatalf("not a task handle: %s", res.Result)
	}
	return *out.Task
}

// pgSleeps counts the statements of marker running on the server.
func pgSleeps(t *testing.T, marker string) int {
	t.Helper()
	var n int
	if err := testDB(t).QueryRow(context.Background(),
		`SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%' || $1 || '%' AND query LIKE '%pg_sleep%' AND state = 'active' AND pid <> pg_backend_pid()`,
		marker).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTaskPostgresLegacy: on 2025-11-25 a task-augmented call answers a
// handle at once (the statement sleeps 1.5s), tasks/get says working,
// then completed, tasks/result gives the rows with the related-task
// _meta; initialize and tools/list say what runs as a task; a required
// tool refuses a plain call with -32601, a tool without task a task
// request with -32601, and an unknown id is -32602.
func TestTaskPostgresLegacy(t *testing.T) {
	marker := fmt.Sprintf("task-legacy-%d", time.Now().UnixNano())
	g := startGateway(t, tasksCaddyfile(t, marker, ""))
	c := legacyClient(t, g.URL, nil)
	ctx := context.Background()

	caps := c.GetServerCapabilities().Tasks
	if caps == nil || caps.Requests == nil || caps.Requests.Tools == nil || caps.Requests.Tools.Call == nil || caps.Cancel == nil || caps.List != nil {
		t.Fatalf("tasks capability %+v: want tools/call and cancel, not list", caps)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	support := map[string]mcp.TaskSupport{}
	for _, tool := range tools.Tools {
		if tool.Execution != nil {
			support[tool.Name] = tool.Execution.TaskSupport
		}
	}
	if support["slow"] != mcp.TaskSupportOptional || support["report"] != mcp.TaskSupportRequired || support["quick"] != "" {
		t.Fatalf("execution.taskSupport %v", support)
	}

	began := time.Now()
	task := created(t, callAsTask(t, c, 101, "slow", map[string]any{"seconds": 1.5}, map[string]any{"ttl": 60000}))
	if waited := time.Since(began); waited > time.Second {
		t.Fatalf("the handle took %s: the call did not run in the background", waited)
	}
	if task.Status != mcp.TaskStatusWorking || task.TTL == nil || *task.TTL != 60000 || task.PollInterval == nil {
		t.Fatalf("handle %+v", task)
	}
	got, err := c.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: task.TaskId}})
	if err != nil || got.Status != mcp.TaskStatusWorking {
		t.Fatalf("tasks/get while it sleeps: %+v %v", got, err)
	}
	done, err := c.WaitForTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: task.TaskId}}, 100*time.Millisecond)
	if err != nil || done.Status != mcp.TaskStatusCompleted {
		t.Fatalf("tasks/get at the end: %+v %v", done, err)
	}
	res, err := c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: task.TaskId}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || !strings.Contains(res.Content[0].(mcp.TextContent).Text, `"slept":true`) || res.IsError {
		t.Fatalf("tasks/result %+v", res)
	}
	if related, _ := res.Meta.AdditionalFields[mcp.RelatedTaskMetaKey].(map[string]any); related["taskId"] != task.TaskId {
		t.Fatalf("tasks/result _meta %+v", res.Meta)
	}

	// A required tool: a task, or -32601 without the request.
	report := created(t, callAsTask(t, c, 102, "report", nil, map[string]any{}))
	if res, err := c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: report.TaskId}}); err != nil ||
		!strings.Contains(res.Content[0].(mcp.TextContent).Text, `"answer":42`) {
		t.Fatalf("the required tool's result: %+v %v", res, err)
	}
	if res := callAsTask(t, c, 103, "report", nil, nil); res.Error == nil || res.Error.Code != mcp.METHOD_NOT_FOUND {
		t.Fatalf("a required tool called plainly: %+v %s", res.Error, res.Result)
	}
	if res := callAsTask(t, c, 104, "quick", nil, map[string]any{}); res.Error == nil || res.Error.Code != mcp.METHOD_NOT_FOUND {
		t.Fatalf("a task of a tool without task: %+v %s", res.Error, res.Result)
	}
	if res := callAsTask(t, c, 105, "quick", nil, nil); res.Error != nil {
		t.Fatalf("a plain call of a plain tool: %+v", res.Error)
	}
	for i, method := range []string{"get", "result", "cancel"} {
		res, err := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(int64(200 + i)),
			Method: "tasks/" + method, Params: map[string]any{"taskId": "no-such-task"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Error == nil || res.Error.Code != mcp.INVALID_PARAMS || res.Error.Message != "task not found" {
			t.Fatalf("tasks/%s of an unknown id: %+v %s", method, res.Error, res.Result)
		}
	}
}

// TestTaskCancelStopsPostgres: tasks/cancel answers the task cancelled at
// once and its statement leaves pg_stat_activity; the task stays
// cancelled, tasks/result says it has no result, a second cancel is
// refused (-32602).
func TestTaskCancelStopsPostgres(t *testing.T) {
	marker := fmt.Sprintf("task-cancel-%d", time.Now().UnixNano())
	cfg := tasksCaddyfile(t, marker, "")
	g := startGateway(t, cfg)
	g.admin = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	if err := g.load(cfg); err != nil {
		t.Fatal(err)
	}
	admin := "http://" + g.admin
	before := scrape(t, admin)
	c := legacyClient(t, g.URL, nil)
	ctx := context.Background()

	task := created(t, callAsTask(t, c, 1, "slow", map[string]any{"seconds": 30}, map[string]any{}))
	deadline := time.Now().Add(5 * time.Second)
	for pgSleeps(t, marker) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the task's statement never showed in pg_stat_activity")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if running := scrape(t, admin)["edgemcp_tasks_running"]; running != 1 {
		t.Errorf("edgemcp_tasks_running %v while the task sleeps, want 1", running)
	}
	res, err := c.CancelTask(ctx, mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: task.TaskId}})
	if err != nil || res.Status != mcp.TaskStatusCancelled {
		t.Fatalf("tasks/cancel: %+v %v", res, err)
	}
	deadline = time.Now().Add(5 * time.Second)
	for n := pgSleeps(t, marker); n > 0; n = pgSleeps(t, marker) {
		if time.Now().After(deadline) {
			t.Fatalf("%d pg_sleep statements of the cancelled task still run after 5s", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	got, err := c.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: task.TaskId}})
	if err != nil || got.Status != mcp.TaskStatusCancelled {
		t.Fatalf("tasks/get after the cancel: %+v %v", got, err)
	}
	if _, err := c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: task.TaskId}}); err == nil ||
		!strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("tasks/result of a cancelled task: %v", err)
	}
	if _, err := c.CancelTask(ctx, mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: task.TaskId}}); err == nil ||
		!strings.Contains(err.Error(), "already ended") {
		t.Fatalf("a second cancel: %v", err)
	}
	// A second task completes: the metrics count both.
	done := created(t, callAsTask(t, c, 2, "report", nil, map[string]any{}))
	if _, err := c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: done.TaskId}}); err != nil {
		t.Fatal(err)
	}
	after := scrape(t, admin)
	for series, want := range map[string]float64{"edgemcp_tasks_created_total": 2, "edgemcp_tasks_cancelled_total": 1,
		"edgemcp_tasks_completed_total": 1, "edgemcp_tasks_failed_total": 0, "edgemcp_tasks_expired_total": 0} {
		if got, ok := after[series]; !ok || got-before[series] != want {
			t.Errorf("%s went up by %v, want %v", series, got-before[series], want)
		}
	}
	// The cancelled call leaves the runner once its statement returned.
	for deadline := time.Now().Add(5 * time.Second); after["edgemcp_tasks_running"] != 0; after = scrape(t, admin) {
		if time.Now().After(deadline) {
			t.Fatalf("edgemcp_tasks_running %v 5s after both ended", after["edgemcp_tasks_running"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// jwtDefaultAuth are the lines of an mcp block that verify every caller
// with idp's JWTs: auth sso and default_auth sso.
func jwtDefaultAuth(idp *testIdP) string {
	return fmt.Sprintf(`auth sso jwt {
			jwks_url %s
			issuer %s
			audience %s
		}
		default_auth sso`, idp.jwks.URL, authIssuer, authAudience)
}

// TestTaskOwnedByCaller: with a JWT default_auth, bob gets for alice's
// task what an unknown id gets, on get, result and cancel, and the task
// runs on for alice.
func TestTaskOwnedByCaller(t *testing.T) {
	idp := newTestIdP(t)
	marker := fmt.Sprintf("task-owner-%d", time.Now().UnixNano())
	g := startGateway(t, tasksCaddyfile(t, marker, jwtDefaultAuth(idp)))
	alice := legacyClient(t, g.URL, bearer(idp.token(t, "alice", "", nil, time.Hour)))
	bob := legacyClient(t, g.URL, bearer(idp.token(t, "bob", "", nil, time.Hour)))
	ctx := context.Background()

	task := created(t, callAsTask(t, alice, 1, "slow", map[string]any{"seconds": 0.5}, map[string]any{}))
	unknown := func(c *client.Client, id string) []string {
		var errs []string
		_, err := c.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: id}})
		errs = append(errs, fmt.Sprint(err))
		_, err = c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: id}})
		errs = append(errs, fmt.Sprint(err))
		_, err = c.CancelTask(ctx, mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: id}})
		return append(errs, fmt.Sprint(err))
	}
	want := unknown(bob, "AAAAAAAAAAAAAAAAAAAAAA")
	if !strings.Contains(want[0], "task not found") {
		t.Fatalf("an unknown id: %v", want)
	}
	if got := unknown(bob, task.TaskId); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("bob on alice's task: %v, want what an unknown id gets: %v", got, want)
	}
	res, err := alice.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: task.TaskId}})
	if err != nil || !strings.Contains(res.Content[0].(mcp.TextContent).Text, `"slept":true`) {
		t.Fatalf("alice's result: %+v %v", res, err)
	}
}

// modernTaskRequest posts a 2026-07-28 request of method with params
// (their _meta added: the client declares the tasks extension when
// declare is set) and the standard headers.
func modernTaskRequest(t *testing.T, s *rawSession, id int, method, name string, params map[string]any, declare bool) rpcResponse {
	t.Helper()
	caps := map[string]any{}
	if declare {
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	}
	p := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
	}}
	for k, v := range params {
		p[k] = v
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": p})
	header := map[string]string{"Mcp-Method": method}
	if name != "" {
		header["Mcp-Name"] = name
	}
	r, _ := s.postWith(t, string(body), header)
	return r
}

// detailed is a 2026-07-28 task answer.
type detailed struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	TTLMs          *int64          `json:"ttlMs"`
	PollIntervalMs *int64          `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result"`
}

func (r rpcResponse) detailed(t *testing.T) detailed {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("error %d: %s", r.Error.Code, r.Error.Message)
	}
	var d detailed
	if err := json.Unmarshal(r.Result, &d); err != nil {
		t.Fatalf("%s: %v", r.Result, err)
	}
	return d
}

// TestTaskPostgresModern: on 2026-07-28 a client that declares the tasks
// extension gets a task (resultType "task", ttlMs, pollIntervalMs) of a
// tool that allows one, tasks/get answers it working and then complete
// with the result inline; a required tool without the extension is
// -32021 naming it; a tool without task answers plainly; tasks/cancel
// acknowledges and stops the statement; tasks/update of a gateway task
// and tasks/result are refused. server/discover declares the extension,
// and 2025-11-25's initialize only its own tasks capability.
func TestTaskPostgresModern(t *testing.T) {
	marker := fmt.Sprintf("task-modern-%d", time.Now().UnixNano())
	g := startGateway(t, tasksCaddyfile(t, marker, ""))
	s := &rawSession{url: g.URL, version: "2026-07-28"}

	handle := modernTaskRequest(t, s, 1, "tools/call", "slow", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 0.5}}, true).detailed(t)
	if handle.ResultType != "task" || handle.Status != "working" || handle.TaskID == "" || handle.TTLMs == nil || *handle.TTLMs != 600000 || handle.PollIntervalMs == nil {
		t.Fatalf("handle %+v", handle)
	}
	var done detailed
	for deadline := time.Now().Add(10 * time.Second); done.Status != "completed"; {
		if time.Now().After(deadline) {
			t.Fatalf("still %+v after 10s", done)
		}
		done = modernTaskRequest(t, s, 2, "tasks/get", "", map[string]any{"taskId": handle.TaskID}, true).detailed(t)
		if done.ResultType != "complete" {
			t.Fatalf("tasks/get %+v", done)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(string(done.Result), `\"slept\":true`) {
		t.Fatalf("inline result %s", done.Result)
	}

	r := modernTaskRequest(t, s, 3, "tools/call", "report", map[string]any{"name": "report", "arguments": map[string]any{}}, false)
	if r.Error == nil || r.Error.Code != -32021 {
		t.Fatalf("a required tool without the extension: %+v %s", r.Error, r.Result)
	}
	var missing struct {
		Error struct {
			Data struct {
				Required struct {
					Extensions map[string]any `json:"extensions"`
				} `json:"requiredCapabilities"`
			} `json:"data"`
		} `json:"error"`
	}
	res, raw := s.exchange(t, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"report","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "report"})
	if err := json.Unmarshal(raw, &missing); err != nil || res.StatusCode != 200 || missing.Error.Data.Required.Extensions["io.modelcontextprotocol/tasks"] == nil {
		t.Fatalf("-32021's data: %d %s", res.StatusCode, raw)
	}
	if plain := modernTaskRequest(t, s, 5, "tools/call", "quick", map[string]any{"name": "quick", "arguments": map[string]any{}}, true).tool(t); !strings.Contains(plain.Content[0].Text, `"one":1`) {
		t.Fatalf("a plain tool with the extension declared: %+v", plain)
	}

	sleeper := modernTaskRequest(t, s, 6, "tools/call", "slow", map[string]any{"name": "slow", "arguments": map[string]any{"seconds": 30}}, true).detailed(t)
	for deadline := time.Now().Add(5 * time.Second); pgSleeps(t, marker) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the task's statement never showed in pg_stat_activity")
		}
	}
	if r := modernTaskRequest(t, s, 7, "tasks/update", "", map[string]any{"taskId": sleeper.TaskID, "inputResponses": map[string]any{}}, true); r.Error == nil || r.Error.Code != mcp.INVALID_PARAMS {
		t.Fatalf("tasks/update: %+v %s", r.Error, r.Result)
	}
	if r := modernTaskRequest(t, s, 8, "tasks/result", "", map[string]any{"taskId": sleeper.TaskID}, true); r.Error == nil || r.Error.Code != mcp.METHOD_NOT_FOUND {
		t.Fatalf("tasks/result on 2026-07-28: %+v %s", r.Error, r.Result)
	}
	if ack := modernTaskRequest(t, s, 9, "tasks/cancel", "", map[string]any{"taskId": sleeper.TaskID}, true).detailed(t); ack.ResultType != "complete" {
		t.Fatalf("tasks/cancel %+v", ack)
	}
	for deadline := time.Now().Add(5 * time.Second); pgSleeps(t, marker) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the cancelled task's statement still runs after 5s")
		}
	}
	if got := modernTaskRequest(t, s, 10, "tasks/get", "", map[string]any{"taskId": sleeper.TaskID}, true).detailed(t); got.Status != "cancelled" {
		t.Fatalf("after the cancel: %+v", got)
	}
	if r := modernTaskRequest(t, s, 11, "tasks/get", "", map[string]any{"taskId": "no-such-task"}, true); r.Error == nil || r.Error.Code != mcp.INVALID_PARAMS {
		t.Fatalf("an unknown task: %+v", r.Error)
	}

	modernCaps := g.mcpClient(t).GetServerCapabilities()
	legacyCaps := legacyClient(t, g.URL, nil).GetServerCapabilities()
	if modernCaps.Extensions["io.modelcontextprotocol/tasks"] == nil || modernCaps.Tasks != nil {
		t.Errorf("2026-07-28 capabilities: extensions %v, tasks %+v", modernCaps.Extensions, modernCaps.Tasks)
	}
	if legacyCaps.Extensions["io.modelcontextprotocol/tasks"] != nil || legacyCaps.Tasks == nil {
		t.Errorf("2025-11-25 capabilities: extensions %v, tasks %+v", legacyCaps.Extensions, legacyCaps.Tasks)
	}
}

// TestTaskTypeScriptSDK: the official TypeScript SDK client's experimental
// tasks API (2025-11-25) sees the tool's task support, runs it as a task
// to its result (callToolStream: taskCreated, then the result), and
// cancels another, whose statement then leaves pg_stat_activity.
func TestTaskTypeScriptSDK(t *testing.T) {
	dir := nodeDir(t)
	marker := fmt.Sprintf("task-sdk-%d", time.Now().UnixNano())
	g := startGateway(t, tasksCaddyfile(t, marker, ""))
	out, err := exec.Command(node22(t, dir), filepath.Join(dir, "sdk-tasks.mjs"), g.URL, "slow", `{"seconds":0.3}`, `{"seconds":30}`).Output()
	if err != nil {
		t.Fatalf("sdk-tasks: %v\n%s", err, out)
	}
	var run struct {
		ProtocolVersion string `json:"protocolVersion"`
		TaskSupport     string `json:"taskSupport"`
		Done            struct {
			Types  []string    `json:"types"`
			TaskID string      `json:"taskId"`
			Result *toolResult `json:"result"`
		} `json:"done"`
		Cancel struct {
			TaskID    string `json:"taskId"`
			Cancelled struct {
				Status string `json:"status"`
			} `json:"cancelled"`
			After struct {
				Status string `json:"status"`
			} `json:"after"`
		} `json:"cancel"`
	}
	if err := json.Unmarshal(out, &run); err != nil {
		t.Fatalf("sdk-tasks output %s: %v", out, err)
	}
	if run.ProtocolVersion != "2025-11-25" || run.TaskSupport != "optional" {
		t.Fatalf("protocol %s, taskSupport %q", run.ProtocolVersion, run.TaskSupport)
	}
	if len(run.Done.Types) == 0 || run.Done.Types[0] != "taskCreated" || run.Done.Types[len(run.Done.Types)-1] != "result" ||
		run.Done.Result == nil || !strings.Contains(run.Done.Result.Content[0].Text, `"slept":true`) {
		t.Fatalf("callToolStream: %s", out)
	}
	if run.Cancel.TaskID == "" || run.Cancel.Cancelled.Status != "cancelled" || run.Cancel.After.Status != "cancelled" {
		t.Fatalf("cancel through the SDK: %s", out)
	}
	for deadline := time.Now().Add(5 * time.Second); pgSleeps(t, marker) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the statement of the task the SDK cancelled still runs after 5s")
		}
	}
}

// TestTaskSurvivesReload: a `caddy reload` neither stops a task's call nor
// forgets the tasks this node keeps in memory: a task made before it is
// read after it, and completes with its result.
func TestTaskSurvivesReload(t *testing.T) {
	marker := fmt.Sprintf("task-reload-%d", time.Now().UnixNano())
	cfg := tasksCaddyfile(t, marker, "")
	g := startGateway(t, cfg)
	c := legacyClient(t, g.URL, nil)
	task := created(t, callAsTask(t, c, 1, "slow", map[string]any{"seconds": 1}, map[string]any{}))
	if err := g.load(strings.Replace(cfg, `"Never a task"`, `"Never a task, reloaded"`, 1)); err != nil {
		t.Fatal(err)
	}
	after := legacyClient(t, g.URL, nil)
	res, err := after.TaskResult(context.Background(), mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: task.TaskId}})
	if err != nil || !strings.Contains(res.Content[0].(mcp.TextContent).Text, `"slept":true`) {
		t.Fatalf("the task made before the reload: %+v %v", res, err)
	}
}
