//go:build linux

package caddymodule

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The fidelity diff (docs/sources.md, MCP servers, "What passes through"):
// the official TypeScript SDK client against each npm MCP server, directly
// and through the gateway (the server as a stdio source), and the two
// views compared as they came over the wire: the tools, resources,
// templates and prompts listed, and the results, errors and notifications
// of calls, reads, prompt gets and completions. Only the documented
// differences are allowed: names under the source's prefix, serverInfo and
// capabilities (the gateway's own), instructions (the server's under a
// heading with the source's name), list order (the gateway's is by name or
// URI) and a list the server refuses (the gateway, which has the
// capability, lists none).

// fidelityServer is one server of the diff: its command line after node,
// and the steps run on it (tool and prompt names unprefixed).
type fidelityServer struct {
	name  string
	args  []string
	env   []string
	steps []map[string]any
}

// fidelityView is fidelity-client.mjs's output.
type fidelityView struct {
	Initialize struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    map[string]any
		Instructions    string `json:"instructions"`
	} `json:"initialize"`
	Lists map[string]any   `json:"lists"`
	Steps []map[string]any `json:"steps"`
}

func TestFidelityThroughGateway(t *testing.T) {
	dir := nodeDir(t)
	node := node22(t, dir)
	pkg := func(p string) string { return filepath.Join(dir, "node_modules", "@modelcontextprotocol", p) }
	files := t.TempDir()
	writeFile(t, filepath.Join(files, "notes.txt"), "first line\nsecond line\n")
	if err := os.Mkdir(filepath.Join(files, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(files, "sub", "deep.md"), "# deep\n")
	call := func(name string, args map[string]any) map[string]any {
		return map[string]any{"op": "call", "name": name, "arguments": args}
	}
	servers := []fidelityServer{
		{name: "everything", args: []string{pkg("server-everything/dist/index.js"), "stdio"}, steps: []map[string]any{
			call("echo", map[string]any{"message": "hi"}),
			call("get-sum", map[string]any{"a": 2, "b": 40}),
			call("get-tiny-image", nil),
			call("get-annotated-message", map[string]any{"messageType": "error", "includeImage": true}),
			call("get-structured-content", map[string]any{"location": "New York"}),
			call("get-resource-links", map[string]any{"count": 2}),
			{"op": "call", "name": "trigger-long-running-operation", "arguments": map[string]any{"duration": 0.3, "steps": 3}, "progress": true},
			call("get-sum", map[string]any{"a": "not a number"}),
			{"op": "read", "uri": "demo://resource/static/document/architecture.md"},
			{"op": "get_prompt", "name": "simple-prompt"},
			{"op": "get_prompt", "name": "args-prompt", "arguments": map[string]any{"city": "Paris", "state": "TX"}},
			{"op": "complete", "ref": map[string]any{"type": "ref/prompt", "name": "completable-prompt"}, "argument": map[string]any{"name": "department", "value": "E"}},
		}},
		{name: "files", args: []string{pkg("server-filesystem/dist/index.js"), files}, steps: []map[string]any{
			call("list_allowed_directories", nil),
			call("read_text_file", map[string]any{"path": filepath.Join(files, "notes.txt"), "head": 1}),
			call("list_directory", map[string]any{"path": files}),
			call("directory_tree", map[string]any{"path": files}),
			call("search_files", map[string]any{"path": files, "pattern": "**/*.md"}),
			call("read_text_file", map[string]any{"path": "/etc/hostname"}),
			call("read_text_file", map[string]any{}),
		}},
		{name: "memory", args: []string{pkg("server-memory/dist/index.js")}, steps: []map[string]any{
			call("create_entities", map[string]any{"entities": []any{map[string]any{"name": "Ada", "entityType": "person", "observations": []any{"wrote the first program"}}}}),
			call("create_relations", map[string]any{"relations": []any{map[string]any{"from": "Ada", "to": "Ada", "relationType": "knows"}}}),
			call("search_nodes", map[string]any{"query": "program"}),
			call("read_graph", nil),
			{"op": "read", "uri": "memory://knowledge-graph"},
		}},
		{name: "thinking", args: []string{pkg("server-sequential-thinking/dist/index.js")}, env: []string{"DISABLE_THOUGHT_LOGGING=true"}, steps: []map[string]any{
			call("sequentialthinking", map[string]any{"thought": "First, list the facts.", "thoughtNumber": 1, "totalThoughts": 2, "nextThoughtNeeded": true}),
			call("sequentialthinking", map[string]any{"thought": "Then conclude.", "thoughtNumber": 2, "totalThoughts": 2, "nextThoughtNeeded": false}),
			call("sequentialthinking", map[string]any{"thought": 7}),
		}},
		{name: "app", args: []string{pkg("server-basic-vanillajs/dist/index.js"), "--stdio"}, steps: []map[string]any{
			{"op": "read", "uri": "ui://get-time/mcp-app.html"},
		}},
		// The suite's own fixture (tests/node), for what no npm server does
		// deterministically: log messages during a call, progress, a
		// completion with hasMore, and no resources/templates/list.
		{name: "fixture", args: []string{filepath.Join(dir, "conformance-upstream.mjs"), "--stdio", "--no-templates"}, steps: []map[string]any{
			call("test_tool_with_logging", nil),
			{"op": "call", "name": "test_tool_with_progress", "progress": true},
			call("test_multiple_content_types", nil),
			call("test_error_handling", nil),
			{"op": "read", "uri": "test://static-binary"},
			{"op": "read", "uri": "test://template/7/data"},
			{"op": "read", "uri": "test://nothing-here"},
			{"op": "get_prompt", "name": "test_prompt_with_arguments", "arguments": map[string]any{"arg1": "a", "arg2": "b"}},
			{"op": "get_prompt", "name": "test_prompt_with_arguments", "arguments": map[string]any{}},
			{"op": "complete", "ref": map[string]any{"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": map[string]any{"name": "arg1", "value": "pa"}},
		}},
	}
	// The gateway declares sampling and elicitation upstream
	// (docs/sources.md, MCP servers): servers that list tools by the client's
	// capabilities see the same client both ways.
	caps := map[string]any{"sampling": map[string]any{}, "elicitation": map[string]any{"form": map[string]any{}}}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			state := func(run string) []string { // the memory server's file, one per run
				return append(append([]string(nil), s.env...), "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), run+".jsonl"))
			}
			direct := runFidelity(t, dir, map[string]any{"command": node, "args": s.args, "env": envMap(state("direct"))}, caps, s.steps)

			var line strings.Builder
			fmt.Fprintf(&line, "source %s mcp stdio %s", s.name, node)
			for _, a := range s.args {
				fmt.Fprintf(&line, " %q", a)
			}
			line.WriteString(" {\n")
			for _, e := range state("gateway") {
				k, v, _ := strings.Cut(e, "=")
				fmt.Fprintf(&line, "\t\t\tenv %s %q\n", k, v)
			}
			line.WriteString("\t\t\trequired\n\t\t}")
			g := startGateway(t, fmt.Sprintf("SITE {\n\tmcp /mcp {\n\t\t%s\n\t}\n}", line.String()))
			prefixed := make([]map[string]any, len(s.steps))
			for i, st := range s.steps {
				p := map[string]any{}
				for k, v := range st {
					p[k] = v
				}
				if n, ok := p["name"].(string); ok {
					p["name"] = s.name + "_" + n
				}
				if ref, ok := p["ref"].(map[string]any); ok && ref["type"] == "ref/prompt" {
					p["ref"] = map[string]any{"type": "ref/prompt", "name": s.name + "_" + ref["name"].(string)}
				}
				prefixed[i] = p
			}
			through := runFidelity(t, dir, map[string]any{"url": g.URL}, caps, prefixed)
			diffFidelity(t, s.name, direct, through)
		})
	}
}

func envMap(env []string) map[string]string {
	out := map[string]string{"PATH": os.Getenv("PATH")}
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		out[k] = v
	}
	return out
}

// runFidelity runs fidelity-client.mjs with connect and steps.
func runFidelity(t *testing.T, dir string, connect, caps map[string]any, steps []map[string]any) fidelityView {
	t.Helper()
	spec, _ := json.Marshal(map[string]any{"connect": connect, "capabilities": caps, "steps": steps})
	file := filepath.Join(t.TempDir(), "spec.json")
	writeFile(t, file, string(spec))
	out, err := exec.Command(node22(t, dir), filepath.Join(dir, "fidelity-client.mjs"), file).Output()
	var v fidelityView
	if err != nil || json.Unmarshal(out, &v) != nil {
		t.Fatalf("fidelity-client %v: %v\n%s", connect, err, out)
	}
	return v
}

// diffFidelity compares the direct view with the view through the gateway
// after taking out the documented differences.
func diffFidelity(t *testing.T, source string, direct, through fidelityView) {
	t.Helper()
	if direct.Initialize.ProtocolVersion != through.Initialize.ProtocolVersion {
		t.Errorf("protocol version: directly %s, through the gateway %s", direct.Initialize.ProtocolVersion, through.Initialize.ProtocolVersion)
	}
	if want := direct.Initialize.Instructions; want != "" && !strings.Contains(through.Initialize.Instructions, "## "+source+"\n\n"+want) {
		t.Errorf("instructions: the server's are not under ## %s in the gateway's:\n%.300s", source, through.Initialize.Instructions)
	}
	// Tasks: the gateway forwards a server's tasks of tools/call (and
	// answers tasks/cancel), so it declares them when the server does;
	// it lists no task (docs/tasks.md, Limits).
	callTasks := func(caps map[string]any) (declared, listed bool) {
		tasks, _ := caps["tasks"].(map[string]any)
		requests, _ := tasks["requests"].(map[string]any)
		tools, _ := requests["tools"].(map[string]any)
		_, declared = tools["call"]
		_, listed = tasks["list"]
		return declared, listed
	}
	upstream, _ := callTasks(direct.Initialize.Capabilities)
	if gateway, listed := callTasks(through.Initialize.Capabilities); gateway != upstream || listed {
		t.Errorf("tasks: the server declares tasks of tools/call: %v; the gateway: %v, with tasks/list: %v (%v)", upstream, gateway, listed, through.Initialize.Capabilities)
	}
	unprefix := func(v any) any {
		if m, ok := v.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				m["name"] = strings.TrimPrefix(n, source+"_")
			}
		}
		return v
	}
	for _, key := range []string{"tools", "resources", "resourceTemplates", "prompts"} {
		d, g := direct.Lists[key], through.Lists[key]
		if dm, ok := d.(map[string]any); ok && dm["error"] != nil {
			if gl, ok := g.([]any); ok && len(gl) == 0 {
				continue // refused directly, empty through the gateway
			}
		}
		if gl, ok := g.([]any); ok && (key == "tools" || key == "prompts") {
			for _, e := range gl {
				unprefix(e)
			}
		}
		ds, gs := sortedList(d), sortedList(g)
		if reflect.DeepEqual(ds, gs) {
			continue
		}
		dl, dok := ds.([]any)
		gl, gok := gs.([]any)
		if !dok || !gok || len(dl) != len(gl) {
			t.Errorf("%s differ:\n directly: %s\n through:  %s", key, entryNames(d), entryNames(g))
			continue
		}
		for i := range dl {
			if !reflect.DeepEqual(dl[i], gl[i]) {
				t.Errorf("%s entry differs:\n directly: %s\n through:  %s", key, excerpt(dl[i]), excerpt(gl[i]))
			}
		}
	}
	if len(direct.Steps) != len(through.Steps) {
		t.Fatalf("%d steps directly, %d through the gateway", len(direct.Steps), len(through.Steps))
	}
	for i := range direct.Steps {
		d, g := normalizeStep(direct.Steps[i]), normalizeStep(through.Steps[i])
		if !reflect.DeepEqual(d, g) {
			t.Errorf("step %d (%v) differs:\n directly: %s\n through:  %s", i, direct.Steps[i]["op"], excerpt(d), excerpt(g))
		}
	}
}

// sortedList is a list's entries in the order of their name, URI or
// template (mcp-go lists sorted, a server in its own order).
func sortedList(v any) any {
	l, ok := v.([]any)
	if !ok {
		return v
	}
	key := func(e any) string {
		m, _ := e.(map[string]any)
		return entryKey(m)
	}
	out := append([]any(nil), l...)
	sort.Slice(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out
}

// entryKey is what identifies a list entry: its URI, template or name.
func entryKey(m map[string]any) string {
	for _, k := range []string{"uri", "uriTemplate", "name"} {
		if v, ok := m[k].(string); ok {
			return v
		}
	}
	return ""
}

// normalizeStep takes out of a step what differs by design: the progress
// token (the client's request id, which counts the list pages too).
func normalizeStep(s map[string]any) map[string]any {
	for _, n := range asList(s["notifications"]) {
		if p, ok := n.(map[string]any)["params"].(map[string]any); ok && p["progressToken"] != nil {
			p["progressToken"] = "token"
		}
	}
	return s
}

// entryNames is what a list shows of its entries in a message: their
// names, URIs or templates.
func entryNames(v any) string {
	l, ok := v.([]any)
	if !ok {
		return excerpt(v)
	}
	var names []string
	for _, e := range l {
		m, _ := e.(map[string]any)
		names = append(names, entryKey(m))
	}
	return strings.Join(names, " ")
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func excerpt(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 1500 {
		return string(b[:1500]) + "…"
	}
	return string(b)
}
