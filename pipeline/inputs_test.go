package pipeline

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func strp(s string) *string { return &s }

func mustSet(t *testing.T, specs ...InputSpec) *InputSet {
	t.Helper()
	var list []*Input
	for _, s := range specs {
		in, err := NewInput(s)
		if err != nil {
			t.Fatalf("NewInput(%+v): %v", s, err)
		}
		list = append(list, in)
	}
	set, err := NewInputSet(list)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestValidateCoercion(t *testing.T) {
	ts := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	tests := []struct {
		name  string
		spec  InputSpec
		value any
		want  any
		err   string
	}{
		{"int from float", InputSpec{Name: "x", Type: "int"}, 42.0, int64(42), ""},
		{"int rejects fraction", InputSpec{Name: "user_id", Type: "int"}, 42.5, nil, `input "user_id": expected integer, got 42.5`},
		{"int from json.Number beyond 2^53", InputSpec{Name: "x", Type: "int"}, json.Number("9007199254740993"), int64(9007199254740993), ""},
		{"int from numeric string", InputSpec{Name: "x", Type: "int"}, "17", int64(17), ""},
		{"int from integral exponent", InputSpec{Name: "x", Type: "int"}, json.Number("4.2e1"), int64(42), ""},
		{"int rejects overflow", InputSpec{Name: "x", Type: "int"}, json.Number("99999999999999999999"), nil, `expected integer, got 99999999999999999999`},
		{"int rejects huge float", InputSpec{Name: "x", Type: "int"}, 1e300, nil, `expected integer, got 1e+300`},
		{"int rejects word", InputSpec{Name: "x", Type: "int"}, "ten", nil, `expected integer, got "ten"`},
		{"int rejects bool", InputSpec{Name: "x", Type: "int"}, true, nil, `expected integer, got true`},
		{"float", InputSpec{Name: "x", Type: "float"}, json.Number("2.5"), 2.5, ""},
		{"float rejects NaN string", InputSpec{Name: "x", Type: "float"}, "NaN", nil, `expected number, got "NaN"`},
		{"string", InputSpec{Name: "x", Type: "string"}, "hé'\"", "hé'\"", ""},
		{"string rejects number", InputSpec{Name: "x", Type: "string"}, 3.0, nil, `expected string, got 3`},
		{"long string is cut in message", InputSpec{Name: "x", Type: "int"}, strings.Repeat("a", 100), nil, `…`},
		{"boolean", InputSpec{Name: "x", Type: "boolean"}, false, false, ""},
		{"boolean from string", InputSpec{Name: "x", Type: "boolean"}, "true", true, ""},
		{"boolean rejects 1", InputSpec{Name: "x", Type: "boolean"}, 1.0, nil, `expected boolean, got 1`},
		{"boolean rejects T", InputSpec{Name: "x", Type: "boolean"}, "T", nil, `expected boolean`},
		{"datetime", InputSpec{Name: "x", Type: "datetime"}, "2024-05-06T07:08:09Z", ts, ""},
		{"datetime rejects date only", InputSpec{Name: "x", Type: "datetime"}, "2024-05-06", nil, `expected RFC 3339 date-time string, got "2024-05-06"`},
		{"array<int>", InputSpec{Name: "ids", Type: "array<int>"}, []any{1.0, json.Number("2")}, []int64{1, 2}, ""},
		{"array<int> element error", InputSpec{Name: "ids", Type: "array<int>"}, []any{1.0, "x"}, nil, `input "ids"[1]: expected integer, got "x"`},
		{"array rejects null element", InputSpec{Name: "ids", Type: "array<string>"}, []any{nil}, nil, `input "ids"[0]: expected string, got null`},
		{"array<datetime>", InputSpec{Name: "x", Type: "array<datetime>"}, []any{"2024-05-06T07:08:09Z"}, []time.Time{ts}, ""},
		{"nested array", InputSpec{Name: "x", Type: "array<array<int>>"}, []any{[]any{1.0}}, []any{[]int64{1}}, ""},
		{"array rejects object", InputSpec{Name: "x", Type: "array<int>"}, map[string]any{}, nil, `expected array, got object`},
		{"object", InputSpec{Name: "x", Type: "object"}, map[string]any{"a": 1.0}, map[string]any{"a": 1.0}, ""},
		{"object rejects array", InputSpec{Name: "x", Type: "object"}, []any{}, nil, `expected object, got array`},
		{"enum ok", InputSpec{Name: "s", Type: "string", Enum: []string{"a", "b"}}, "b", "b", ""},
		{"enum refuses", InputSpec{Name: "s", Type: "string", Enum: []string{"a", "b"}}, "c", nil, `input "s": expected one of a, b, got "c"`},
		{"int enum", InputSpec{Name: "n", Type: "int", Enum: []string{"1", "2"}}, 2.0, int64(2), ""},
		{"int enum refuses", InputSpec{Name: "n", Type: "int", Enum: []string{"1", "2"}}, 3.0, nil, `expected one of 1, 2, got 3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := mustSet(t, tt.spec)
			got, err := set.Validate(map[string]any{tt.spec.Name: tt.value})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got[tt.spec.Name], tt.want) {
				t.Fatalf("got %#v, want %#v", got[tt.spec.Name], tt.want)
			}
		})
	}
}

func TestValidatePresence(t *testing.T) {
	set := mustSet(t,
		InputSpec{Name: "id", Type: "int", Required: true},
		InputSpec{Name: "name", Type: "string", Default: strp("world")},
		InputSpec{Name: "note", Type: "string"},
	)
	got, err := set.Validate(map[string]any{"id": 1.0})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"id": int64(1), "name": "world", "note": nil}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v want %#v", got, want)
	}
	// null means absent: the default applies.
	got, err = set.Validate(map[string]any{"id": 1.0, "name": nil})
	if err != nil || got["name"] != "world" {
		t.Fatalf("null did not take the default: %v %v", got, err)
	}
	_, err = set.Validate(map[string]any{"nmae": "x", "id": "y"})
	if err == nil {
		t.Fatal("expected errors")
	}
	// All problems at once, sorted.
	if want := `input "id": expected integer, got "y"; input "nmae": unknown input`; err.Error() != want {
		t.Fatalf("err = %q want %q", err, want)
	}
	_, err = set.Validate(nil)
	if err == nil || err.Error() != `input "id": required` {
		t.Fatalf("err = %v", err)
	}
}

func TestNewInputRefusals(t *testing.T) {
	tests := []struct {
		spec InputSpec
		err  string
	}{
		{InputSpec{Name: "x", Type: "integr"}, `unknown type "integr"`},
		{InputSpec{Name: "x", Type: "array<int"}, `missing closing '>'`},
		{InputSpec{Name: "bad name", Type: "int"}, `name must match`},
		{InputSpec{Name: "x", Type: "int", Default: strp("abc")}, `default "abc": not a valid integer literal`},
		{InputSpec{Name: "x", Type: "int", Default: strp("1.5")}, `expected integer, got 1.5`},
		{InputSpec{Name: "x", Type: "string", Default: strp("z"), Enum: []string{"a"}}, `default: expected one of a, got "z"`},
		{InputSpec{Name: "x", Type: "int", Enum: []string{"a"}}, `enum value "a"`},
		{InputSpec{Name: "x", Type: "object", Enum: []string{"a"}}, `enum is only allowed on scalar types`},
		{InputSpec{Name: "x", Type: "int", Required: true, Default: strp("1")}, `both required and have a default`},
		{InputSpec{Name: "x", Type: "datetime", Default: strp("yesterday")}, `RFC 3339`},
	}
	for _, tt := range tests {
		_, err := NewInput(tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%+v: err = %v, want %q", tt.spec, err, tt.err)
		}
	}
}

func TestJSONSchema(t *testing.T) {
	set := mustSet(t,
		InputSpec{Name: "user_id", Type: "int", Required: true, Description: "The user's primary key"},
		InputSpec{Name: "name", Type: "string", Default: strp("world")},
		InputSpec{Name: "sort", Type: "string", Default: strp("name"), Enum: []string{"name", "price"}},
		InputSpec{Name: "since", Type: "datetime"},
		InputSpec{Name: "ids", Type: "array<int>"},
		InputSpec{Name: "ratio", Type: "float", Default: strp("0.5")},
		InputSpec{Name: "on", Type: "boolean"},
		InputSpec{Name: "filter", Type: "object"},
	)
	want := `{"type":"object","properties":{` +
		`"user_id":{"type":"integer","description":"The user's primary key"},` +
		`"name":{"type":"string","default":"world"},` +
		`"sort":{"type":"string","enum":["name","price"],"default":"name"},` +
		`"since":{"type":"string","format":"date-time"},` +
		`"ids":{"type":"array","items":{"type":"integer"}},` +
		`"ratio":{"type":"number","default":0.5},` +
		`"on":{"type":"boolean"},` +
		`"filter":{"type":"object"}},` +
		`"required":["user_id"],"additionalProperties":false}`
	if got := string(set.JSONSchema()); got != want {
		t.Fatalf("schema\n got %s\nwant %s", got, want)
	}
	empty := mustSet(t)
	if got := string(empty.JSONSchema()); got != `{"type":"object","properties":{},"required":[],"additionalProperties":false}` {
		t.Fatalf("empty schema: %s", got)
	}
}

func TestTypeRoundTrip(t *testing.T) {
	for _, s := range []string{"string", "int", "float", "boolean", "datetime", "object", "array<int>", "array<array<string>>"} {
		ty, err := ParseType(s)
		if err != nil || ty.String() != s {
			t.Errorf("%s → %v %v", s, ty, err)
		}
	}
}

func TestRowsMarshalKeepsColumnOrder(t *testing.T) {
	r := &Rows{Columns: []string{"z", "a", "m"}, Values: [][]any{{int64(1), "x", nil}, {int64(2), json.RawMessage(`{"k":[1]}`), json.Number("1.50")}}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"z":1,"a":"x","m":null},{"z":2,"a":{"k":[1]},"m":1.50}]`; string(b) != want {
		t.Fatalf("got %s want %s", b, want)
	}
	if b, _ := json.Marshal(&Rows{}); string(b) != "[]" {
		t.Fatalf("empty rows: %s", b)
	}
}
