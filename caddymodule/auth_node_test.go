package caddymodule

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAuthTypeScriptSDKClient drives the auth endpoint with the official
// TypeScript SDK client: without credentials it is refused at connect with
// 401; with a token it sees a filtered tools/list, and a call to a tool its
// token may not use is refused with -32000 and nothing of the policy.
func TestAuthTypeScriptSDKClient(t *testing.T) {
	dir := nodeDir(t)
	t.Setenv("EDGEMCP_AUTH_TEST_KEY", authAPIKey)
	idp := newTestIdP(t)
	g := startGateway(t, authCaddyfile(t, idp, true))
	run := sdkClientRunner(t, dir, g.URL, `[
		{"op":"list"},
		{"op":"call","name":"read-customers","arguments":{}},
		{"op":"call","name":"admin-only","arguments":{}},
		{"op":"call","name":"key-report","arguments":{}}
	]`)

	out, err := run(nil)
	if !connectRefused(out, err, 401) {
		t.Fatalf("connect without credentials: %v %s", err, out)
	}

	tok := idp.token(t, "alice", "mcp:use customers:read", map[string]any{"role": "user"}, time.Hour)
	out, err = run(map[string]string{"Authorization": "Bearer " + tok})
	if err != nil {
		t.Fatalf("sdk-client: %v\n%s", err, out)
	}
	var res struct {
		Steps []sdkStep `json:"steps"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Steps) != 4 {
		t.Fatalf("sdk-client output %s: %v", out, err)
	}
	var tools []struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(res.Steps[0].Tools, &tools)
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"public-info", "read-customers"}) {
		t.Errorf("filtered tools/list through the SDK: %v", names)
	}
	if ok := res.Steps[1]; ok.Result == nil || !strings.Contains(ok.Result.Content[0].Text, "Ada Lovelace") {
		t.Errorf("read-customers: %+v %+v", ok.Result, ok.Error)
	}
	for i, want := range []string{"authentication: not permitted to call this tool", "authentication: credentials required"} {
		step := res.Steps[2+i]
		if step.Error == nil || step.Error.Code != -32000 || step.Error.Message != want {
			t.Errorf("step %d: got %+v, want -32000 %q", 2+i, step.Error, want)
		}
	}
	if strings.Contains(string(out), "admin") && strings.Contains(string(out), "role") {
		t.Errorf("the SDK's view reveals the admin-only policy: %s", out)
	}
}
