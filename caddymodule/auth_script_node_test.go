package caddymodule

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuthScriptTypeScriptSDKClient: the official TypeScript SDK client
// against an endpoint guarded by the script provider: refused at connect
// with 401 without a token; with bob's token the script's per-tool refusal
// arrives as -32000 with the script's reason, and allowed tools answer.
func TestAuthScriptTypeScriptSDKClient(t *testing.T) {
	dir := nodeDir(t)
	scripts := scriptFiles(t, map[string]string{
		"auth.js": scriptAuthJS,
		"ops.js":  `export default () => ({})`,
		"hold.js": `export default () => ({})`,
	})
	g := startGateway(t, scriptAuthCaddyfile(t, scripts, "127.0.0.1:9"))
	run := sdkClientRunner(t, dir, g.URL, `[
		{"op":"list"},
		{"op":"call","name":"public-info","arguments":{}},
		{"op":"call","name":"ops-only","arguments":{}}
	]`)

	out, err := run(nil)
	if !connectRefused(out, err, 401) {
		t.Fatalf("connect without a token: %v %s", err, out)
	}

	out, err = run(map[string]string{"Authorization": "Bearer " + scriptBobToken})
	if err != nil {
		t.Fatalf("sdk-client: %v\n%s", err, out)
	}
	var res struct {
		Steps []sdkStep `json:"steps"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Steps) != 3 {
		t.Fatalf("sdk-client output %s: %v", out, err)
	}
	var tools []struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(res.Steps[0].Tools, &tools)
	if len(tools) != 2 || tools[0].Name == "ops-only" || tools[1].Name == "ops-only" {
		t.Errorf("bob's tools/list through the SDK: %+v", tools)
	}
	if ok := res.Steps[1]; ok.Result == nil || len(ok.Result.Content) != 1 || !strings.Contains(ok.Result.Content[0].Text, `"n"`) {
		t.Errorf("public-info: %+v %+v", ok.Result, ok.Error)
	}
	if e := res.Steps[2].Error; e == nil || e.Code != -32000 || e.Message != "authentication: invalid credentials: ops tools are for alice only" {
		t.Errorf("ops-only for bob: %+v", e)
	}
	if strings.Contains(string(out), scriptBobToken) {
		t.Errorf("the token comes back to the client: %s", out)
	}
}

// sdkClientRunner writes the steps for tests/node/sdk-client.mjs and returns
// a function that runs them against url, sending headers.
func sdkClientRunner(t *testing.T, dir, url, steps string) func(headers map[string]string) ([]byte, error) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "steps.json")
	writeFile(t, file, steps)
	node := node22(t, dir)
	return func(headers map[string]string) ([]byte, error) {
		cmd := exec.Command(node, filepath.Join(dir, "sdk-client.mjs"), url, file)
		h, _ := json.Marshal(headers)
		cmd.Env = append(os.Environ(), "EDGEMCP_HEADERS="+string(h))
		return cmd.Output()
	}
}

// connectRefused reports whether sdk-client.mjs failed to connect with the
// HTTP status code.
func connectRefused(out []byte, err error, code int) bool {
	var refused struct {
		ConnectError struct {
			Code int `json:"code"`
		} `json:"connectError"`
	}
	return err != nil && json.Unmarshal(out, &refused) == nil && refused.ConnectError.Code == code
}
