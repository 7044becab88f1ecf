package openapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/sources/upstream"
)

// TestSelection: include/exclude globs over operationId, tag, method and
// path; deprecated operations only when asked for.
func TestSelection(t *testing.T) {
	doc := load(t, "testdata/petstore.yaml")
	for _, tc := range []struct {
		opt  Options
		want string
	}{
		{Options{Include: []string{"listPets", "getT*"}}, "listPets getTree"},
		{Options{Include: []string{"pets"}, Exclude: []string{"POST"}}, "listPets showPetById updatePet"},
		{Options{Include: []string{"/pets/*"}}, "showPetById updatePet"},
		{Options{Include: []string{"GET /pets/{petId}", "GET /pets/*/photo"}}, "showPetById getPhoto"},
		{Options{Include: []string{"delete"}}, ""},
		{Options{Include: []string{"delete"}, Deprecated: true}, "deletePet"},
	} {
		var got []string
		ops, _, err := Operations(doc, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range ops {
			got = append(got, o.ID)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%+v: %q, want %q", tc.opt, strings.Join(got, " "), tc.want)
		}
	}
	if _, _, err := Operations(doc, Options{Include: []string{"[a-"}}); err == nil || !strings.Contains(err.Error(), `"[a-"`) {
		t.Errorf("bad glob: %v", err)
	}
}

// TestNameCollision: of two operations that make one tool name, the
// second is left out, naming the first; strict fails the load, naming both.
func TestNameCollision(t *testing.T) {
	doc := load(t, "testdata/petstore.yaml")
	doc.Paths.Value("/tree").Get.OperationID = "list.pets"
	doc.Paths.Value("/pets").Get.OperationID = "list_pets"
	_, skipped, err := Operations(doc, Options{Prefix: "p"})
	if err != nil || len(skipped) != 1 || skipped[0].Operation != "GET /tree (list.pets)" || !strings.Contains(skipped[0].Reason, "GET /pets (list_pets)") {
		t.Errorf("collision: %v %+v", err, skipped)
	}
	_, _, err = Operations(doc, Options{Prefix: "p", Strict: true})
	if err == nil || !strings.Contains(err.Error(), "GET /pets (list_pets)") || !strings.Contains(err.Error(), "GET /tree (list.pets)") {
		t.Errorf("collision, strict: %v", err)
	}
}

func operation(t *testing.T, doc *Document, id string, opt Options) *Operation {
	t.Helper()
	opt.Deprecated = true
	ops, _, err := Operations(doc, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range ops {
		if o.ID == id || (id == "" && o.ID == "") {
			return o
		}
	}
	t.Fatalf("no operation %q", id)
	return nil
}

func schemaJSON(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestInputSchema: parameters of every location and the body, with their
// descriptions, defaults, bounds and required; the spec's Accept header
// parameter is ignored; a parameter a credential sets is not offered; a
// readOnly property is not asked for.
func TestInputSchema(t *testing.T) {
	doc := load(t, "testdata/petstore.yaml")
	list := operation(t, doc, "listPets", Options{Reserved: upstream.Reserved{Query: []string{"api_key"}}})
	got := schemaJSON(t, list.InputSchema())
	want := `{"additionalProperties":false,"properties":{"X-Request-Tag":{"type":"string"},"limit":{"default":20,"description":"How many pets to return","maximum":100,"minimum":1,"type":"integer"},"session":{"type":"string"},"tags":{"items":{"type":"string"},"type":"array"}},"type":"object"}`
	if got != want {
		t.Errorf("listPets input schema\n got %s\nwant %s", got, want)
	}
	create := operation(t, doc, "createPet", Options{})
	got = schemaJSON(t, create.InputSchema())
	want = `{"additionalProperties":false,"properties":{"body":{"properties":{"name":{"maxLength":40,"type":"string"},"tag":{"type":["string","null"]}},"required":["name"],"type":"object"}},"required":["body"],"type":"object"}`
	if got != want {
		t.Errorf("createPet input schema\n got %s\nwant %s", got, want)
	}
	notes := operation(t, doc, "", Options{})
	if got := schemaJSON(t, notes.InputSchema()); strings.Contains(got, "Accept") || !strings.Contains(got, `"required":["day"]`) {
		t.Errorf("notes input schema %s", got)
	}
}

// TestRecursiveSchemaIsCut: a schema that contains itself is published to
// a bounded depth.
func TestRecursiveSchemaIsCut(t *testing.T) {
	doc := load(t, "testdata/petstore.yaml")
	out := schemaJSON(t, operation(t, doc, "getTree", Options{}).OutputSchema())
	if !strings.Contains(out, `"children":{"items":{"$comment":"cut:`) {
		t.Errorf("tree output schema %s", out)
	}
}

// TestOutputSchema: an object 2xx response is published (allOf kept); a
// non-object one is not.
func TestOutputSchema(t *testing.T) {
	doc := load(t, "testdata/petstore.yaml")
	show := schemaJSON(t, operation(t, doc, "showPetById", Options{}).OutputSchema())
	if !strings.Contains(show, `"allOf"`) || strings.Contains(show, "readOnly") {
		t.Errorf("showPetById output schema %s", show)
	}
	if s := operation(t, doc, "getPhoto", Options{}).OutputSchema(); s != nil {
		t.Errorf("getPhoto output schema %v", s)
	}
	n := load(t, "testdata/notes31.json")
	note := schemaJSON(t, operation(t, n, "getNote", Options{}).OutputSchema())
	if !strings.Contains(note, `"text":{"type":["string","null"]}`) || !strings.Contains(note, `"exclusiveMinimum":0`) {
		t.Errorf("3.1 output schema %s", note)
	}
}

// TestAnnotationsAndAliases follow the method and the operationId.
func TestAnnotationsAndAliases(t *testing.T) {
	doc := load(t, "testdata/petstore.yaml")
	del := operation(t, doc, "deletePet", Options{Prefix: "pets"})
	if a := del.Annotations(); !*a.Destructive || !*a.Idempotent || *a.ReadOnly || !*a.OpenWorld {
		t.Errorf("DELETE annotations %+v", a)
	}
	if a := operation(t, doc, "listPets", Options{}).Annotations(); !*a.ReadOnly || a.Destructive != nil {
		t.Errorf("GET annotations %+v", a)
	}
	if !slices.Equal(del.Aliases, []string{"deletePet", "pets.deletePet"}) {
		t.Errorf("aliases %q", del.Aliases)
	}
}

// TestPathParameterWithoutDeclaration: the operation is left out, saying
// why; strict fails the load.
func TestPathParameterWithoutDeclaration(t *testing.T) {
	doc := load(t, "testdata/petstore.yaml")
	doc.Paths.Value("/tree").Get.OperationID = "getTree"
	doc.Paths.Set("/tree/{id}", doc.Paths.Value("/tree"))
	doc.Paths.Delete("/tree")
	ops, skipped, err := Operations(doc, Options{})
	if err != nil || len(skipped) != 1 || skipped[0].Operation != "GET /tree/{id} (getTree)" || !strings.Contains(skipped[0].Reason, "{id}") {
		t.Errorf("undeclared path parameter: %v %+v", err, skipped)
	}
	if slices.ContainsFunc(ops, func(o *Operation) bool { return o.ID == "getTree" }) || len(ops) == 0 {
		t.Errorf("operations %d, getTree among them", len(ops))
	}
	if _, _, err := Operations(doc, Options{Strict: true}); err == nil || !strings.Contains(err.Error(), "GET /tree/{id} (getTree): ") || !strings.Contains(err.Error(), "{id}") {
		t.Errorf("undeclared path parameter, strict: %v", err)
	}
}
