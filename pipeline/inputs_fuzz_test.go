package pipeline

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzValidate feeds arbitrary JSON arguments to a set of every input type:
// validation never panics, and what it accepts is what the declared types
// allow (integers integral, enums within their list, arrays of their
// element type) and encodes back to JSON.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		`{"s":"x","i":1,"f":1.5,"b":true,"d":"2026-01-02T03:04:05Z","a":[1,2],"o":{"k":[1]},"e":"red"}`,
		`{"i":9007199254740993}`, `{"i":"12"}`, `{"i":1e400}`, `{"a":[[1]]}`, `{"e":"blue "}`, `{"d":"yesterday"}`,
		`{"s":null}`, `{}`, `{"unknown":1}`, `{"f":"NaN"}`, `{"b":"true"}`,
	} {
		f.Add(s)
	}
	set := fuzzSet(f)
	f.Fuzz(func(t *testing.T, raw string) {
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		var args map[string]any
		if dec.Decode(&args) != nil {
			return
		}
		out, err := set.Validate(args)
		if err != nil {
			return
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("accepted %s, which does not encode: %v", raw, err)
		}
		if e := out["e"]; e != nil && e != "red" && e != "green" {
			t.Fatalf("enum accepted %v", e)
		}
		if a, ok := out["a"].([]any); ok {
			for _, v := range a {
				if _, ok := v.(int64); !ok {
					if n, ok := v.(json.Number); !ok || strings.ContainsAny(n.String(), ".eE") {
						t.Fatalf("array<int> accepted %#v", v)
					}
				}
			}
		}
	})
}

func fuzzSet(f *testing.F) *InputSet {
	var list []*Input
	for _, s := range []InputSpec{
		{Name: "s", Type: "string"}, {Name: "i", Type: "int"}, {Name: "f", Type: "float"}, {Name: "b", Type: "boolean"},
		{Name: "d", Type: "datetime"}, {Name: "a", Type: "array<int>"}, {Name: "o", Type: "object"},
		{Name: "e", Type: "string", Enum: []string{"red", "green"}},
	} {
		in, err := NewInput(s)
		if err != nil {
			f.Fatal(err)
		}
		list = append(list, in)
	}
	set, err := NewInputSet(list)
	if err != nil {
		f.Fatal(err)
	}
	return set
}
