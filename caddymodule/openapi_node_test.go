package caddymodule

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestOpenAPITypeScriptSDK: the official TypeScript SDK client uses an
// OpenAPI source's tools: it lists them (with their output schemas, under
// output_schema strict), calls one and gets structuredContent (which the
// SDK checks against the published outputSchema), calls it again by its
// aliases, and sees the upstream's 404 as a JSON-RPC error with the status
// and the body. An answer outside the document's response schema is an
// isError result that says why under output_schema strict, and passes
// whole by default (no outputSchema published): on a gateway that
// published the schema without holding answers to it, the SDK refused
// that call with -32602.
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
			output_schema strict
		}
		source loose openapi ../sources/openapi/testdata/petstore.yaml {
			base_url %s/v1
			credential bearer {env.EDGEMCP_TEST_PETS_TOKEN}
			retries 0
		}
	}
}`, up.URL, up.URL))
	out, err := sdkClientRunner(t, dir, g.URL, `[
		{"op":"list"},
		{"op":"call","name":"pets_showPetById","arguments":{"petId":"7"}},
		{"op":"call","name":"pets_showPetById","arguments":{"petId":"8"}},
		{"op":"call","name":"pets.showPetById","arguments":{"petId":"9"}},
		{"op":"call","name":"pets_showPetById","arguments":{"petId":"0"}},
		{"op":"call","name":"pets_showPetById","arguments":{"petId":"nameless"}},
		{"op":"call","name":"loose_showPetById","arguments":{"petId":"nameless"}}
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
	if err := json.Unmarshal(out, &run); err != nil || len(run.Steps) != 7 {
		t.Fatalf("sdk-client output %s: %v", out, err)
	}

	var names []string
	var show, loose map[string]json.RawMessage
	for _, tl := range run.Steps[0].Tools {
		var name string
		_ = json.Unmarshal(tl["name"], &name)
		if after, ok := strings.CutPrefix(name, "pets_"); ok {
			names = append(names, after)
		}
		switch name {
		case "pets_showPetById":
			show = tl
		case "loose_showPetById":
			loose = tl
		}
	}
	slices.Sort(names)
	// deletePet is deprecated, so not offered.
	if got := strings.Join(names, " "); got != "createPet getPhoto getTree get_notes_day listPets showPetById updatePet" {
		t.Errorf("tools/list through the SDK: %s", got)
	}
	if !strings.Contains(string(show["outputSchema"]), `"type":"object"`) || !strings.Contains(string(show["annotations"]), `"readOnlyHint":true`) {
		t.Errorf("pets_showPetById as the SDK lists it: %s", out)
	}
	if loose == nil || loose["outputSchema"] != nil {
		t.Errorf("loose_showPetById as the SDK lists it (no outputSchema by default): %s", loose)
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
	if st := run.Steps[5]; st.Error != nil || st.Result == nil || !st.Result.IsError || len(st.Result.Content) != 1 ||
		!strings.Contains(st.Result.Content[0].Text, "does not match the operation's response schema") || !strings.Contains(st.Result.Content[0].Text, `"name"`) {
		t.Errorf("an answer outside the schema under output_schema strict: %+v %+v", st.Result, st.Error)
	}
	if st := run.Steps[6]; st.Error != nil || st.Result == nil || st.Result.IsError || st.Result.StructuredContent["id"] != float64(7) {
		t.Errorf("an answer outside the schema by default: %+v %+v", st.Result, st.Error)
	}

	up.mu.Lock()
	defer up.mu.Unlock()
	if want := []string{"/v1/pets/7", "/v1/pets/8", "/v1/pets/9", "/v1/pets/0", "/v1/pets/nameless", "/v1/pets/nameless"}; !slices.Equal(up.paths, want) {
		t.Errorf("the upstream saw %v, want %v", up.paths, want)
	}
	for _, a := range up.auths {
		if a != "Bearer pets-sdk-token" {
			t.Errorf("the upstream saw Authorization %q", a)
		}
	}
}
