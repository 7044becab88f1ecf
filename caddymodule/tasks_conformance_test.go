//go:build linux

package caddymodule

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The conformance suite's scenarios of the 2026-07-28 tasks extension
// (conformance 0.2.0-alpha.12, tests/node's conformance-next), run against
// gateway tasks over real backends and through an MCP source
// (docs/tasks.md, Conformance).

// taskScenarios are the suite's ten scenarios of the tasks extension and
// how many of each one's checks pass and fail against the gateway, the
// same directly and through an MCP source. The suite counts its schema
// check of every message (wire-schema-valid) as one more passed check.
var taskScenarios = map[string]struct {
	passed, failed int
	why            string // why the failed checks fail (docs/tasks.md, Conformance)
}{
	"tasks-lifecycle":              {passed: 9},
	"tasks-capability-negotiation": {passed: 5},
	"tasks-wire-fields":            {passed: 4},
	"tasks-request-state-removal":  {passed: 3},
	"tasks-request-headers":        {passed: 5},
	"tasks-required-task-error":    {passed: 3},
	"tasks-dispatch-and-envelope": {passed: 8, failed: 1,
		why: "its resultType check parks confirm_delete in input_required to send tasks/update: a gateway task never asks for input while it runs"},
	"tasks-mrtr-input": {passed: 1, failed: 3,
		why: "every check needs a task that parks in input_required (confirm_delete, multi_input): a gateway task never asks for input while it runs"},
	"tasks-mrtr-composition": {passed: 1, failed: 1,
		why: "directly, its rounds pass (test_tool_with_task asks for approval, then is a task) but the result must echo a name the question gathered: an approval gathers accept or decline; through the MCP source the upstream's question does not reach the client"},
	// The suite skips its one check (its harness awaits a rewrite onto
	// subscriptions/listen); the gateway pushes no task status anyway.
	"tasks-status-notifications": {},
}

// taskConformanceCaddyfile declares the fixture tools the scenarios name:
// greet (never a task, a script), slow_compute (pg_sleep, so that a
// cancelled task stops its statement on the server), failing_job (a tool
// error, only as a task), protocol_error_job (a division by zero on the
// server: a protocol error); and at /via the same tools through an MCP
// source on the gateway's own /mcp, whose tasks pass through.
// test_tool_with_task asks for approval and runs only as a task: the
// 2026-07-28 question comes first, the approved retry makes the task.
func taskConformanceCaddyfile(t *testing.T, port int) string {
	dir := t.TempDir()
	greet, failing := filepath.Join(dir, "greet.js"), filepath.Join(dir, "failing.js")
	writeFile(t, greet, "export default ({ inputs }) => ({ content: [{ type: 'text', text: `Hello, ${inputs.name}!` }] })\n")
	writeFile(t, failing, "export default () => ({ content: [{ type: 'text', text: 'the job failed' }], isError: true })\n")
	approved := filepath.Join(dir, "approved.js")
	writeFile(t, approved, "export default () => ({ content: [{ type: 'text', text: 'approved, then run as a task' }] })\n")
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		connector pg postgres %s {
			statement_timeout 2m
		}
		tool greet {
			description "Says hello"
			handler %s
			input name string required
		}
		tool slow_compute {
			description "Sleeps seconds on the database, then says so"
			use pg
			statement "SELECT {{ inputs.label }}::text AS label, pg_sleep({{ inputs.seconds }}) IS NOT NULL AS slept"
			input seconds float required
			input label string default ""
			task optional ttl 10m
		}
		tool failing_job {
			description "A job whose tool reports an error"
			handler %s
			task required
		}
		tool test_tool_with_task {
			description "Asks for approval, then runs only as a task"
			handler %s
			approval required
			task required
		}
		tool protocol_error_job {
			description "A statement the database refuses"
			use pg
			statement "SELECT 1 / 0 AS never"
			task optional
		}
	}
	mcp /via {
		source conf mcp http://127.0.0.1:%d/mcp {
			prefix off
		}
	}
}`, postgresURL(t), greet, failing, approved, port)
}

// TestConformanceTasks: the suite's task scenarios against the gateway's
// own tasks (Postgres and script tools) and through an MCP source fronting
// them, whose tasks pass through under sealed ids: each scenario passes
// and fails the checks taskScenarios says, both ways. A check that
// regresses fails the test, and so does one that starts to pass: the
// table and docs/tasks.md must then say so.
func TestConformanceTasks(t *testing.T) {
	port := freePort(t)
	g := startGateway(t, taskConformanceCaddyfile(t, port), func(g *gateway) { g.port = port })
	via := strings.TrimSuffix(g.URL, "/mcp") + "/via"
	// The source lists its upstream's tools once that endpoint serves.
	s := &rawSession{url: via, version: "2026-07-28"}
	waitFor(t, "the source's tools at /via", func() bool {
		r := modernTaskRequest(t, s, 1, "tools/list", "", map[string]any{}, true)
		return strings.Contains(string(r.Result), `"slow_compute"`)
	})
	scenarios := slices.Sorted(maps.Keys(taskScenarios))
	dir := nodeDir(t)
	node := node22(t, dir)
	// Both runs at once: the scenarios wait on sleeps and polls, not CPU.
	var direct, proxied string
	var wg sync.WaitGroup
	wg.Go(func() { direct = conformanceOutput(dir, node, "conformance-next", g.URL, scenarios) })
	wg.Go(func() { proxied = conformanceOutput(dir, node, "conformance-next", via, scenarios) })
	wg.Wait()
	// Directly, tasks-mrtr-composition fails on its last step only: the
	// question, and the approved retry's task, pass.
	const onlyEcho = `(expected "Alice"); got "approved, then run as a task"`
	if !strings.Contains(direct, onlyEcho) {
		t.Errorf("tasks-mrtr-composition directly: want its failure to be the echo only (%s)\n%s", onlyEcho, indent(direct))
	}
	for _, run := range []struct{ name, out string }{{"directly", direct}, {"through the MCP source", proxied}} {
		got := map[string][2]int{}
		for _, m := range scenarioLine.FindAllStringSubmatch(run.out, -1) {
			p, _ := strconv.Atoi(m[3])
			f, _ := strconv.Atoi(m[4])
			got[m[2]] = [2]int{p, f}
		}
		var wrong []string
		for _, name := range scenarios {
			want := taskScenarios[name]
			if c, ok := got[name]; !ok || c != [2]int{want.passed, want.failed} {
				wrong = append(wrong, fmt.Sprintf("%s: %d passed, %d failed (reported %v), want %d and %d",
					name, c[0], c[1], ok, want.passed, want.failed))
			}
		}
		if len(wrong) > 0 {
			t.Errorf("%s:\n\t%s\n%s", run.name, strings.Join(wrong, "\n\t"), indent(run.out))
		}
	}
}
