package jsonrpc

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// What a proxied MCP server sends is passed on as it sent it, fields the
// gateway does not model included (docs/sources.md, MCP servers): its
// tools/list entries with the gateway's name spliced in, the entries of
// its resource, template and prompt lists, its results of resources/read,
// prompts/get and completion/complete. These helpers edit JSON text in
// place, by the byte ranges of its members, so that everything else stays
// as it was.

var errNotJSONObject = errors.New("not a JSON object")

// Members calls fn with each member of the JSON object obj: its key and
// the byte range of its value in obj. fn returns false to stop. It scans
// obj once checked (json.Valid), without decoding it: it runs on every
// proxied result and list entry the gateway passes on.
func Members(obj []byte, fn func(key string, start, end int) bool) error {
	i := skipSpace(obj, 0)
	if i == len(obj) || obj[i] != '{' || !json.Valid(obj) {
		return errNotJSONObject
	}
	i++
	for {
		i = skipSpace(obj, i)
		switch obj[i] {
		case '}':
			return nil
		case ',':
			i = skipSpace(obj, i+1)
		}
		keyEnd := stringEnd(obj, i)
		key, err := keyOf(obj[i:keyEnd])
		if err != nil {
			return err
		}
		start := skipSpace(obj, skipSpace(obj, keyEnd)+1) // past the colon
		end := valueEnd(obj, start)
		if !fn(key, start, end) {
			return nil
		}
		i = end
	}
}

// The scanners below read JSON that json.Valid accepted: each returns
// where what starts at i ends.

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd: b[i] is a string's opening quote.
func stringEnd(b []byte, i int) int {
	for j := i + 1; ; j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
}

func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; ; j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
	}
	j := i // a number, true, false or null
	for j < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[j])) {
		j++
	}
	return j
}

// keyOf is the key a quoted member name spells (invalid UTF-8 read as
// encoding/json reads it).
func keyOf(quoted []byte) (string, error) {
	if bytes.IndexByte(quoted, '\\') < 0 && utf8.Valid(quoted) {
		return string(quoted[1 : len(quoted)-1]), nil
	}
	var key string
	err := json.Unmarshal(quoted, &key)
	return key, err
}

// Elements calls fn with the byte range of each element of the JSON
// array arr.
func Elements(arr []byte, fn func(start, end int)) error {
	dec := json.NewDecoder(bytes.NewReader(arr))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return errors.New("not a JSON array")
	}
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		end := int(dec.InputOffset())
		fn(end-len(v), end)
	}
	return nil
}

// Member is the value of key in the JSON object obj, nil when it has
// none.
func Member(obj []byte, key string) json.RawMessage {
	var out json.RawMessage
	_ = Members(obj, func(k string, start, end int) bool {
		if k == key {
			out = obj[start:end]
			return false
		}
		return true
	})
	return out
}

// WithMember is obj with the value of key replaced by val, or with
// key: val added at its end when obj has no such key.
func WithMember(obj []byte, key string, val []byte) ([]byte, error) {
	at, to := -1, -1
	err := Members(obj, func(k string, start, end int) bool {
		if k == key {
			at, to = start, end
			return false
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if at >= 0 {
		return Splice(obj, at, to, val), nil
	}
	k, _ := json.Marshal(key)
	closing := bytes.LastIndexByte(obj, '}')
	head := bytes.TrimRight(obj[:closing], " \t\r\n")
	out := make([]byte, 0, len(obj)+len(k)+len(val)+2)
	out = append(out, head...)
	if head[len(head)-1] != '{' {
		out = append(out, ',')
	}
	out = append(append(append(out, k...), ':'), val...)
	return append(out, obj[closing:]...), nil
}

// Splice is b with b[start:end] replaced by val, in a new slice.
func Splice(b []byte, start, end int, val []byte) []byte {
	out := make([]byte, 0, len(b)-(end-start)+len(val))
	out = append(append(append(out, b[:start]...), val...), b[end:]...)
	return out
}

// MergeResult is the upstream's result as it sent it, with the members of
// mcp-go's encoding of it that it lacks (on 2026-07-28, resultType and
// the server's _meta entries) added, so that the protocol's decoration
// stays while nothing of the upstream's is lost.
func MergeResult(upstream, ours []byte) ([]byte, error) {
	out := upstream
	var ourMeta json.RawMessage
	var missing [][2][]byte
	err := Members(ours, func(key string, start, end int) bool {
		if key == "_meta" {
			ourMeta = ours[start:end]
		} else if Member(upstream, key) == nil {
			missing = append(missing, [2][]byte{[]byte(key), ours[start:end]})
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	for _, m := range missing {
		if out, err = WithMember(out, string(m[0]), m[1]); err != nil {
			return nil, err
		}
	}
	if ourMeta == nil {
		return out, nil
	}
	meta := Member(out, "_meta")
	if meta == nil {
		return WithMember(out, "_meta", ourMeta)
	}
	merged := meta
	var addErr error
	err = Members(ourMeta, func(key string, start, end int) bool {
		if Member(merged, key) == nil {
			merged, addErr = WithMember(merged, key, ourMeta[start:end])
		}
		return addErr == nil
	})
	if err = cmp.Or(err, addErr); err != nil {
		return nil, err
	}
	return WithMember(out, "_meta", merged)
}
