package caddymodule

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestOpenAPITypeScriptSDK: the official TypeScript SDK client uses an
// OpenAPI source's tools: it lists them (with their output schemas), calls
// one and gets structuredContent (which the SDK checks against the
// published outputSchema), calls it again by its aliases, and sees the
// upstream's 404 as a JSON-RPC error with the status and the body.
func TestOpenAPITypeScriptSDK(t *testing.T) {
	dir := nodeDir(t)
	up := newPetsUpstream(t)
	t.Setenv("EDGEMCP_TEST_PETS_TOKEN", "pets-sdk-token")
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		source pets openapi ../sources/openapi/testdata/petstore.yaml {
			base_url %s/v1
			credential bearer {env.EDGEMCP_TEST_PETS_TOKEN}
			retries 0
		}
	}
}`, up.URL))
	out, err := sdkClientRunner(t, dir, g.URL, `[
		{"op":"list"},
		{"op":"call","name":"pets_showPetById","arguments":{"petId":"7"}},
		{"op":"call","name":"showPetById","arguments":{"petId":"8"}},
		{"op":"call","name":"pets.showPetById","arguments":{"petId":"9"}},
		{"op":"call","name":"pets_showPetById","arguments":{"petId":"0"}}
	]`)(nil)
	if err != nil {
		t.Fatalf("sdk-client: %v\n%s", err, out)
	}
	var run struct {
		Steps []struct {
			Tools  []map[string]json.RawMessage `json:"tools"`
			Result *struct {
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
				StructuredContent map[string]any `json:"structuredContent"`
				IsError           bool           `json:"isError"`
			} `json:"result"`
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(out, &run); err != nil || len(run.Steps) != 5 {
		t.Fatalf("sdk-client output %s: %v", out, err)
	}

	var names []string
	var show map[string]json.RawMessage
	for _, tl := range run.Steps[0].Tools {
		var name string
		_ = json.Unmarshal(tl["name"], &name)
		names = append(names, name)
		if name == "pets_showPetById" {
			show = tl
		}
	}
	slices.Sort(names)
	// deletePet is deprecated, so not offered.
	if got := strings.Join(names, " "); got != "pets_createPet pets_getPhoto pets_getTree pets_get_notes_day pets_listPets pets_showPetById pets_updatePet" {
		t.Errorf("tools/list through the SDK: %s", got)
	}
	if !strings.Contains(string(show["outputSchema"]), `"type":"object"`) || !strings.Contains(string(show["annotations"]), `"readOnlyHint":true`) {
		t.Errorf("pets_showPetById as the SDK lists it: %s", out)
	}

	for i, want := range []string{"pet 7", "pet 8", "pet 9"} {
		step := run.Steps[1+i]
		if step.Error != nil || step.Result == nil || step.Result.IsError {
			t.Errorf("call %d through the SDK: %+v %+v", 1+i, step.Result, step.Error)
			continue
		}
		if step.Result.StructuredContent["name"] != want || step.Result.StructuredContent["id"] != float64(7) {
			t.Errorf("call %d: structuredContent %v", 1+i, step.Result.StructuredContent)
		}
		if len(step.Result.Content) != 1 || !strings.Contains(step.Result.Content[0].Text, want) {
			t.Errorf("call %d: content %+v", 1+i, step.Result.Content)
		}
	}
	if e := run.Steps[4].Error; e == nil || e.Code != -32000 || !strings.Contains(e.Message, `HTTP 404 Not Found: {"code": 404, "message": "no such pet"}`) {
		t.Errorf("upstream 404 through the SDK: %+v (result %+v)", e, run.Steps[4].Result)
	}

	up.mu.Lock()
	defer up.mu.Unlock()
	if want := []string{"/v1/pets/7", "/v1/pets/8", "/v1/pets/9", "/v1/pets/0"}; !slices.Equal(up.paths, want) {
		t.Errorf("the upstream saw %v, want %v", up.paths, want)
	}
	for _, a := range up.auths {
		if a != "Bearer pets-sdk-token" {
			t.Errorf("the upstream saw Authorization %q", a)
		}
	}
}
