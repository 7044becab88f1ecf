package pipeline

import (
	"fmt"
	"strings"
)

// Kind is the base type of a declared input.
type Kind int

const (
	KindString Kind = iota + 1
	KindInt
	KindFloat
	KindBool
	KindDatetime
	KindArray
	KindObject
)

// Type is a declared input type: a kind, and the element type for arrays.
type Type struct {
	Kind Kind
	Elem *Type // only for KindArray
}

var kindNames = map[string]Kind{
	"string":   KindString,
	"int":      KindInt,
	"integer":  KindInt,
	"float":    KindFloat,
	"number":   KindFloat,
	"boolean":  KindBool,
	"bool":     KindBool,
	"datetime": KindDatetime,
	"object":   KindObject,
}

// ParseType reads the Caddyfile spelling of a type: string, int, float,
// boolean, datetime, object, or array<T> (nested arrays allowed).
func ParseType(s string) (Type, error) {
	s = strings.TrimSpace(s)
	if inner, ok := strings.CutPrefix(s, "array<"); ok {
		inner, ok = strings.CutSuffix(inner, ">")
		if !ok {
			return Type{}, fmt.Errorf("type %q: missing closing '>'", s)
		}
		elem, err := ParseType(inner)
		if err != nil {
			return Type{}, err
		}
		return Type{Kind: KindArray, Elem: &elem}, nil
	}
	if k, ok := kindNames[s]; ok {
		return Type{Kind: k}, nil
	}
	return Type{}, fmt.Errorf("unknown type %q (want string, int, float, boolean, datetime, object or array<T>)", s)
}

// String is the canonical Caddyfile spelling, so that adapt output
// round-trips.
func (t Type) String() string {
	switch t.Kind {
	case KindString:
		return "string"
	case KindInt:
		return "int"
	case KindFloat:
		return "float"
	case KindBool:
		return "boolean"
	case KindDatetime:
		return "datetime"
	case KindObject:
		return "object"
	case KindArray:
		if t.Elem == nil {
			return "array<string>"
		}
		return "array<" + t.Elem.String() + ">"
	}
	return "unknown"
}

// jsonTypeName is how the type reads in error messages ("expected integer").
func (t Type) jsonTypeName() string {
	switch t.Kind {
	case KindInt:
		return "integer"
	case KindFloat:
		return "number"
	case KindBool:
		return "boolean"
	case KindDatetime:
		return "RFC 3339 date-time string"
	case KindArray:
		return "array"
	case KindObject:
		return "object"
	}
	return "string"
}
