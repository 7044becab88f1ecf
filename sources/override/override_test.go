package override

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/pin"
)

// recorder is an upstream tool's executor that keeps the arguments each
// call sent it.
type recorder struct {
	mu   sync.Mutex
	sent []map[string]any
}

func (r *recorder) Execute(_ context.Context, call *pipeline.Call) (*pipeline.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, call.Inputs)
	return &pipeline.Result{Value: "ok"}, nil
}

// upstreamTool is a proxied MCP tool as sources/mcp makes one.
func upstreamTool(rec pipeline.Executor) *pipeline.Tool {
	yes := true
	entry := `{"name":"create_issue","description":"Creates an issue.","inputSchema":{"type":"object","properties":{"repo":{"type":"string"},"title":{"type":"string"},"labels":{"type":"array"}},"required":["repo","title"]},"annotations":{"title":"Create issue","readOnlyHint":true},"_meta":{"x":1}}`
	var lt struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	_ = json.Unmarshal([]byte(entry), &lt)
	return &pipeline.Tool{Name: "gh_create_issue", Original: "create_issue", Description: "Creates an issue.",
		InputSchema: lt.InputSchema, Listing: json.RawMessage(entry), Aliases: []string{"gh.create_issue", "create_issue"},
		Annotations: pipeline.Annotations{ReadOnly: &yes}, Executor: rec}
}

func parse(t *testing.T, text string) Overrides {
	t.Helper()
	var o Overrides
	d := caddyfile.NewTestDispenser(text)
	for d.Next() {
		if err := o.Unmarshal(d); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
	}
	return o
}

func withIdentity(id *pipeline.Identity) pipeline.Authorizer {
	return authorizerFunc(func(context.Context, *pipeline.Call) (*pipeline.Identity, error) { return id, nil })
}

type authorizerFunc func(context.Context, *pipeline.Call) (*pipeline.Identity, error)

func (f authorizerFunc) Authorize(ctx context.Context, c *pipeline.Call) (*pipeline.Identity, error) {
	return f(ctx, c)
}

// TestOverrides: one tool renamed, described, narrowed and annotated, as
// the registry, its listing entry and its calls see it; the source's own
// tool, and so its pin, unchanged.
func TestOverrides(t *testing.T) {
	rec := &recorder{}
	orig := upstreamTool(rec)
	before, _ := pin.Definition(orig)
	o := parse(t, `rename create_issue open_ticket
describe gh_create_issue "Opens a ticket in the web team's tracker."
hide create_issue repo labels {
	set repo {{ auth.claims.team }}
}
annotate create_issue destructive
rename nothing_here x`)
	tools, unused, err := o.Apply([]*pipeline.Tool{orig})
	if err != nil {
		t.Fatal(err)
	}
	if len(unused) != 1 || unused[0] != "nothing_here" {
		t.Errorf("unused %v", unused)
	}
	got := tools[0]
	if got.Name != "open_ticket" || !contains(got.Aliases, "gh_create_issue") || !contains(got.Aliases, "create_issue") {
		t.Errorf("name %q aliases %v", got.Name, got.Aliases)
	}
	if got.Description != "Opens a ticket in the web team's tracker." {
		t.Errorf("description %q", got.Description)
	}
	if a := got.Annotations; a.ReadOnly == nil || *a.ReadOnly || a.Destructive == nil || !*a.Destructive {
		t.Errorf("annotations %+v: destructive must correct the upstream's read-only", a)
	}
	var entry struct {
		Description string         `json:"description"`
		Annotations map[string]any `json:"annotations"`
		Meta        map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(got.Listing, &entry); err != nil {
		t.Fatal(err)
	}
	if entry.Description != got.Description || entry.Annotations["readOnlyHint"] != false || entry.Annotations["destructiveHint"] != true ||
		entry.Annotations["title"] != "Create issue" || entry.Meta["x"] == nil {
		t.Errorf("listing entry %s", got.Listing)
	}
	schema := string(got.Schema())
	if strings.Contains(schema, "repo") || strings.Contains(schema, "labels") || !strings.Contains(schema, `"required":["title"]`) {
		t.Errorf("schema %s", schema)
	}
	if len(got.FromIdentity) == 0 {
		t.Error("a value from the caller's identity is not declared: the gateway would serve it without auth")
	}

	got.Auth = withIdentity(&pipeline.Identity{Subject: "ann", Claims: map[string]any{"team": "web"}})
	e, err := pipeline.NewEngine([]*pipeline.Tool{got})
	if err != nil {
		t.Fatal(err)
	}
	if _, perr := e.Call(context.Background(), "create_issue", map[string]any{"title": "t"}, &pipeline.RequestInfo{}); perr != nil {
		t.Fatalf("call by the upstream's name: %v", perr)
	}
	if sent := rec.sent[0]; sent["repo"] != "web" || sent["title"] != "t" || len(sent) != 2 {
		t.Errorf("the upstream got %v", sent)
	}
	for _, hidden := range []string{"repo", "labels"} {
		_, perr := e.Call(context.Background(), "open_ticket", map[string]any{"title": "t", hidden: "x"}, &pipeline.RequestInfo{})
		if perr == nil || perr.Code != pipeline.CodeStageFailed || !strings.Contains(perr.Message, hidden) {
			t.Errorf("a caller sent the hidden %s: %v", hidden, perr)
		}
	}
	if len(rec.sent) != 1 {
		t.Errorf("a refused call reached the upstream: %v", rec.sent)
	}

	if orig.Name != "gh_create_issue" || orig.Description != "Creates an issue." || !strings.Contains(string(orig.InputSchema), "repo") {
		t.Errorf("the source's tool was changed: %+v", orig)
	}
	if after, _ := pin.Definition(orig); string(after) != string(before) {
		t.Error("the upstream's definition moved")
	}
}

// TestOverrideRefused: an override that cannot hold fails, naming why:
// the gateway must not serve the tool less narrowed than the operator said.
func TestOverrideRefused(t *testing.T) {
	for text, want := range map[string]string{
		"hide create_issue nope":  "hide nope: the tool has no such argument",
		"hide create_issue title": "hide title: the tool requires it; give it a value with set",
	} {
		o := parse(t, text)
		if _, _, err := o.Apply([]*pipeline.Tool{upstreamTool(&recorder{})}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", text, err, want)
		}
	}
	api := upstreamTool(&namesMaker{})
	if _, _, err := parse(t, "hide create_issue labels").Apply([]*pipeline.Tool{api}); err == nil || !strings.Contains(err.Error(), "source's own set") {
		t.Errorf("hide on a tool whose arguments make names: %v", err)
	}
}

type namesMaker struct{ recorder }

func (*namesMaker) ArgumentsMakeNames() {}

// TestHideOptional: a hidden optional argument without set is never sent.
func TestHideOptional(t *testing.T) {
	rec := &recorder{}
	tools, _, err := parse(t, "hide create_issue labels").Apply([]*pipeline.Tool{upstreamTool(rec)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tools[0].Executor.Execute(context.Background(), &pipeline.Call{Inputs: map[string]any{"repo": "r", "title": "t"}}); err != nil {
		t.Fatal(err)
	}
	if _, sent := rec.sent[0]["labels"]; sent || len(rec.sent[0]) != 2 {
		t.Errorf("sent %v", rec.sent[0])
	}
}

// TestAnnotateWords: read_only makes a tool non-destructive, not_ states
// the opposite, and words that contradict each other are refused.
func TestAnnotateWords(t *testing.T) {
	no := false
	tools, _, err := parse(t, "annotate create_issue read_only not_open_world idempotent").Apply([]*pipeline.Tool{
		func() *pipeline.Tool {
			x := upstreamTool(&recorder{})
			x.Annotations = pipeline.Annotations{ReadOnly: &no}
			return x
		}()})
	if err != nil {
		t.Fatal(err)
	}
	a := tools[0].Annotations
	if !*a.ReadOnly || *a.Destructive || *a.OpenWorld || !*a.Idempotent {
		t.Errorf("annotations ro=%v d=%v ow=%v i=%v", *a.ReadOnly, *a.Destructive, *a.OpenWorld, *a.Idempotent)
	}
}

// TestDescribeByNewName: lines may name a renamed tool by its new name.
func TestDescribeByNewName(t *testing.T) {
	o := parse(t, "rename create_issue open_ticket\ndescribe open_ticket \"Opens a ticket.\"\nannotate gh_create_issue destructive")
	out, unused, err := o.Apply([]*pipeline.Tool{upstreamTool(&recorder{})})
	if err != nil || len(unused) != 0 {
		t.Fatalf("%v, unused %v", err, unused)
	}
	if got := out[0]; got.Name != "open_ticket" || got.Description != "Opens a ticket." || got.Annotations.Destructive == nil || !*got.Annotations.Destructive {
		t.Errorf("%+v", got)
	}
	o = parse(t, "rename create_issue open_ticket\ndescribe open_ticket \"a\"\ndescribe create_issue \"b\"")
	if _, _, err := o.Apply([]*pipeline.Tool{upstreamTool(&recorder{})}); err == nil || !strings.Contains(err.Error(), "describe given for both") {
		t.Errorf("describe under two names: %v", err)
	}
}

// TestUnmarshalErrors: each bad line is refused at its file and line.
func TestUnmarshalErrors(t *testing.T) {
	for text, want := range map[string]string{
		"rename t":                                "usage: rename <tool> <new-name>",
		"rename t has.dot":                        "a tool name must match",
		"rename t a\nrename t b":                  "rename t: given twice",
		"describe t one two":                      "quote the text",
		"annotate t read_only destructive":        "destructive contradicts read_only",
		"annotate t sneaky":                       `unknown hint "sneaky"`,
		"hide t":                                  "usage: hide",
		"hide t a {\n\tset b x\n}":                "set b: the argument is not hidden",
		"hide t a {\n\tset a {{ env.SECRET }}\n}": "want a literal, {{ auth.subject }}",
		"hide t a {\n\tunset a\n}":                `unrecognized sub-directive "unset"`,
		"rename":                                  "rename needs a tool name",
	} {
		var o Overrides
		d := caddyfile.NewTestDispenser(text)
		var err error
		for d.Next() && err == nil {
			err = o.Unmarshal(d)
		}
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "Testfile:") {
			t.Errorf("%q: %v, want %q at a file and line", text, err, want)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
