package pipeline

import (
	"encoding/json"
	"time"
)

// JSONSchema is the input schema published in tools/list (JSON Schema draft
// 2020-12, MCP's default dialect): int → integer, datetime → string with
// format date-time, enum, default and description carried over; an input
// with a default is not required; unknown properties are refused, as
// Validate refuses them.
func (s *InputSet) JSONSchema() json.RawMessage {
	props := make(orderedObject, 0, len(s.list))
	required := []string{}
	for _, in := range s.list {
		props = append(props, member{in.Name, in.schema()})
		if in.Required && !in.HasDefault {
			required = append(required, in.Name)
		}
	}
	schema := orderedObject{
		{"type", "object"},
		{"properties", props},
		{"required", required},
		{"additionalProperties", false},
	}
	b, _ := json.Marshal(schema) // only plain values: cannot fail
	return b
}

func (in *Input) schema() orderedObject {
	o := typeSchema(in.Type)
	if in.Description != "" {
		o = append(o, member{"description", in.Description})
	}
	if len(in.Enum) > 0 {
		vals := make([]any, len(in.Enum))
		for i, v := range in.Enum {
			vals[i] = schemaValue(v)
		}
		o = append(o, member{"enum", vals})
	}
	if in.HasDefault {
		o = append(o, member{"default", schemaValue(in.Default)})
	}
	return o
}

func typeSchema(t Type) orderedObject {
	switch t.Kind {
	case KindInt:
		return orderedObject{{"type", "integer"}}
	case KindFloat:
		return orderedObject{{"type", "number"}}
	case KindBool:
		return orderedObject{{"type", "boolean"}}
	case KindDatetime:
		return orderedObject{{"type", "string"}, {"format", "date-time"}}
	case KindObject:
		return orderedObject{{"type", "object"}}
	case KindArray:
		return orderedObject{{"type", "array"}, {"items", typeSchema(*t.Elem)}}
	}
	return orderedObject{{"type", "string"}}
}

// schemaValue renders a coerced value as it reads in JSON.
func schemaValue(v any) any {
	if ts, ok := v.(time.Time); ok {
		return ts.Format(time.RFC3339Nano)
	}
	return v
}

// orderedObject marshals as a JSON object with keys in insertion order, so
// the published schema reads in the order the operator declared inputs.
type orderedObject []member

type member struct {
	key   string
	value any
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	buf := []byte{'{'}
	for i, m := range o {
		if i > 0 {
			buf = append(buf, ',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		buf = append(append(append(buf, k...), ':'), v...)
	}
	return append(buf, '}'), nil
}
