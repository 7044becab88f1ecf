// Package jsonrpc reads and writes the JSON-RPC messages of MCP the way
// mcp-go does, without its reflection: the request reader of a tools/call,
// the encoders of a tool's result and of a response message, and edits of
// JSON text by byte range that keep everything else as it was. It knows
// nothing of Caddy or the gateway; the fast path (package fastpath) and
// the shell use it. Every encoder here is held to mcp-go's bytes by a test.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// CallMessage is a JSON-RPC request as the fast path reads it; A is how
// its arguments are read.
type CallMessage[A any] struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  CallParams[A]   `json:"params"`
}

// CallParams are a tools/call's params.
type CallParams[A any] struct {
	Name      string          `json:"name"`
	Arguments A               `json:"arguments"`
	Meta      json.RawMessage `json:"_meta"`
	// What only mcp-go reads: a 2026-07-28 retry's answers and state
	// (approvals), a task-augmented call.
	InputResponses json.RawMessage `json:"inputResponses"`
	RequestState   json.RawMessage `json:"requestState"`
	Task           json.RawMessage `json:"task"`
}

// Plain reports whether the params hold nothing the direct path leaves to
// mcp-go besides _meta.
func (p *CallParams[A]) Plain() bool {
	return len(p.InputResponses) == 0 && len(p.RequestState) == 0 && len(p.Task) == 0
}

// DecodeCall reads body into msg, numbers in the arguments as
// json.Number, and reports whether body is one JSON value whose arguments
// are an object, null or absent. Otherwise the caller reads it again.
func DecodeCall(body []byte, msg *CallMessage[map[string]any]) bool {
	if fastDecodeCall(body, msg) { // the common shape
		return true
	}
	// A message of its own (not msg, which then stays on its caller's
	// stack), without what the fast reader filled before it gave up.
	var slow CallMessage[map[string]any]
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	err := dec.Decode(&slow)
	*msg = slow
	if err != nil {
		return false
	}
	// Decode stops after the first value; json.Unmarshal, like mcp-go,
	// refuses anything after it.
	return len(bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")) == 0
}

// DecodeID is the JSON-RPC id as json.Unmarshal decodes it into an any
// (a string, a float64; nil when it is neither valid nor present), without
// reflection for the plain ids clients send: strings without escapes and
// integers short enough to be exact as a float64.
func DecodeID(raw json.RawMessage) any {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' &&
		bytes.IndexByte(raw[1:n-1], '"') < 0 && bytes.IndexByte(raw[1:n-1], '\\') < 0 && plainASCII(raw[1:n-1]) {
		return string(raw[1 : n-1])
	}
	if n := len(raw); n >= 1 && n <= 15 {
		digits := raw
		if digits[0] == '-' {
			digits = digits[1:]
		}
		if len(digits) > 0 && (digits[0] != '0' || string(raw) == "0") && allDigits(digits) {
			i, _ := strconv.ParseInt(string(raw), 10, 64)
			return float64(i)
		}
	}
	var id any
	if json.Unmarshal(raw, &id) != nil {
		return nil
	}
	return id
}

func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
