package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"
)

// jsonNode reads a JSON document into the YAML node tree that YAML's parser
// would make of it (tags resolved as its resolver does, lines counted), so
// that kin-openapi can decode it without parsing it as YAML.
//
// Why: kin-openapi reads every document, JSON too, with go.yaml.in/yaml,
// whose scanner keeps each flow collection ("{...}", "[...]") as a possible
// mapping key until it closes, so a JSON document is tokenized whole before
// the first node is made: three quarters of the load of GitHub's 13 MB
// document went there (BenchmarkGitHubSpec). Decoding with encoding/json
// instead was slower still (kin-openapi's UnmarshalJSON methods re-read
// every nested object). The tree built here is decoded by the same
// UnmarshalYAML methods as a parsed one.
func jsonNode(data []byte) (*yaml.Node, error) {
	s := jsonScanner{data: data, line: 1}
	n, err := s.value(0)
	if err != nil {
		return nil, err
	}
	s.space()
	if s.pos != len(s.data) {
		return nil, s.errorf("data after the top-level value")
	}
	return n, nil
}

// maxJSONDepth bounds the nesting, as encoding/json does.
const maxJSONDepth = 10000

type jsonScanner struct {
	data      []byte
	pos       int
	line      int // of pos
	lineStart int // offset of the line's first byte
}

func (s *jsonScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d: %s", s.line, fmt.Sprintf(format, args...))
}

func (s *jsonScanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case '\n':
			s.line++
			s.lineStart = s.pos + 1
		case ' ', '\t', '\r':
		default:
			return
		}
		s.pos++
	}
}

func (s *jsonScanner) node(kind yaml.Kind, tag, value string) *yaml.Node {
	return &yaml.Node{Kind: kind, Tag: tag, Value: value, Line: s.line, Column: s.pos - s.lineStart + 1}
}

func (s *jsonScanner) value(depth int) (*yaml.Node, error) {
	if depth > maxJSONDepth {
		return nil, s.errorf("nested too deeply")
	}
	s.space()
	if s.pos >= len(s.data) {
		return nil, s.errorf("unexpected end of data")
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object(depth)
	case c == '[':
		return s.array(depth)
	case c == '"':
		n := s.node(yaml.ScalarNode, "!!str", "")
		v, err := s.str()
		n.Value, n.Style = v, yaml.DoubleQuotedStyle
		return n, err
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	for _, lit := range [...]struct{ word, tag string }{{"true", "!!bool"}, {"false", "!!bool"}, {"null", "!!null"}} {
		if bytes.HasPrefix(s.data[s.pos:], []byte(lit.word)) {
			n := s.node(yaml.ScalarNode, lit.tag, lit.word)
			s.pos += len(lit.word)
			return n, nil
		}
	}
	return nil, s.errorf("unexpected %q", s.data[s.pos])
}

func (s *jsonScanner) object(depth int) (*yaml.Node, error) {
	n := s.node(yaml.MappingNode, "!!map", "")
	n.Style = yaml.FlowStyle
	s.pos++ // {
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return n, nil
	}
	for {
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return nil, s.errorf("want a string as an object's key")
		}
		k := s.node(yaml.ScalarNode, "!!str", "")
		v, err := s.str()
		if err != nil {
			return nil, err
		}
		k.Value, k.Style = v, yaml.DoubleQuotedStyle
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return nil, s.errorf("want ':' after an object's key")
		}
		s.pos++
		val, err := s.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, k, val)
		s.space()
		if s.pos >= len(s.data) {
			return nil, s.errorf("unexpected end of data in an object")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return n, nil
		default:
			return nil, s.errorf("want ',' or '}' in an object")
		}
	}
}

func (s *jsonScanner) array(depth int) (*yaml.Node, error) {
	n := s.node(yaml.SequenceNode, "!!seq", "")
	n.Style = yaml.FlowStyle
	s.pos++ // [
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return n, nil
	}
	for {
		v, err := s.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, v)
		s.space()
		if s.pos >= len(s.data) {
			return nil, s.errorf("unexpected end of data in an array")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return n, nil
		default:
			return nil, s.errorf("want ',' or ']' in an array")
		}
	}
}

// str reads a string; escapes are left to encoding/json, which reads them
// as JSON defines them.
func (s *jsonScanner) str() (string, error) {
	start := s.pos
	s.pos++ // "
	escaped := false
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; {
		case c == '"':
			s.pos++
			raw := s.data[start:s.pos]
			if !utf8.Valid(raw) {
				return "", s.errorf("invalid UTF-8 in a string")
			}
			if !escaped {
				return string(raw[1 : len(raw)-1]), nil
			}
			var v string
			if err := json.Unmarshal(raw, &v); err != nil {
				return "", s.errorf("%v", err)
			}
			return v, nil
		case c == '\\':
			escaped = true
			s.pos += 2
		case c < 0x20:
			return "", s.errorf("control character in a string")
		default:
			s.pos++
		}
	}
	return "", errors.New("unexpected end of data in a string")
}

// number reads a number and tags it as YAML's resolver tags the same text:
// !!int when it fits 64 bits, else !!float ("-0" too, which YAML reads as
// negative zero).
func (s *jsonScanner) number() (*yaml.Node, error) {
	start := s.pos
	float := false
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		if c == '.' || c == 'e' || c == 'E' {
			float = true
		} else if !(c == '-' || c == '+' || c >= '0' && c <= '9') {
			break
		}
		s.pos++
	}
	text := string(s.data[start:s.pos])
	if !json.Valid(s.data[start:s.pos]) {
		return nil, s.errorf("invalid number %q", text)
	}
	tag := "!!float"
	if !float && text != "-0" {
		if _, err := strconv.ParseInt(text, 10, 64); err == nil {
			tag = "!!int"
		} else if _, err := strconv.ParseUint(text, 10, 64); err == nil {
			tag = "!!int"
		}
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: text, Line: s.line, Column: start - s.lineStart + 1}
	return n, nil
}
