// Package pin holds a source's tools to the definitions the operator
// approved (docs/governance.md, Pinned definitions): a canonical hash of
// each tool's definition as its upstream gives it, a pin file meant to be
// committed, and the decision of which tools are served and which are held
// because they changed or are new. It imports no Caddy: the gateway calls
// it where a source's tools become the registry's.
package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Definition is t's definition as its upstream gives it, in canonical
// JSON (Canonical): what a pin covers.
//
// A tool that carries its upstream's own tools/list entry (Listing: an MCP
// server's tool) is that whole entry, every field: name, title,
// description, inputSchema, outputSchema, annotations, icons, execution
// and _meta alike. The gateway passes every one of them to its clients,
// so a field left out of the pin would be one an upstream could change
// unnoticed in what clients read (an MCP App's _meta.ui names the UI a
// client renders; a title is what a person approves).
//
// Any other source's tool (OpenAPI, GraphQL) is what its source derived
// from the document: the upstream's name for it (Original), title,
// description, input and output schemas and annotations, in the shape of
// an MCP tools/list entry. The gateway's own choices (its name in the
// namespace, aliases, and the overrides of docs/governance.md) are not
// part of it: they are the operator's, and the pin guards the upstream's.
func Definition(t *pipeline.Tool) (json.RawMessage, error) {
	if t.Listing != nil {
		return Canonical(t.Listing)
	}
	entry := map[string]any{"name": UpstreamName(t), "inputSchema": t.Schema()}
	if t.Title != "" {
		entry["title"] = t.Title
	}
	if t.Description != "" {
		entry["description"] = t.Description
	}
	if len(t.OutputSchema) > 0 {
		entry["outputSchema"] = t.OutputSchema
	}
	hints := map[string]any{}
	for key, v := range map[string]*bool{
		"readOnlyHint": t.Annotations.ReadOnly, "destructiveHint": t.Annotations.Destructive,
		"idempotentHint": t.Annotations.Idempotent, "openWorldHint": t.Annotations.OpenWorld,
	} {
		if v != nil {
			hints[key] = *v
		}
	}
	if len(hints) > 0 {
		entry["annotations"] = hints
	}
	raw, err := json.Marshal(entry)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %v", t.Name, err)
	}
	return Canonical(raw)
}

// UpstreamName is the name t has in its source: Original, else its name.
func UpstreamName(t *pipeline.Tool) string {
	if t.Original != "" {
		return t.Original
	}
	return t.Name
}

// Canonical is raw with object keys sorted, no white space and strings
// written with the fewest escapes, so that two texts of one JSON value,
// however their keys are ordered, spaced or escaped, are the same bytes.
// Numbers keep the digits they were written with.
func Canonical(raw json.RawMessage) (json.RawMessage, error) {
	v, err := decode(raw)
	if err != nil {
		return nil, err
	}
	return encode(v, "")
}

// Hash is the pin of a canonical definition: "sha256:" and its hex digest.
func Hash(canonical json.RawMessage) string {
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// decode reads one JSON value, numbers as json.Number.
func decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("not one JSON value")
	}
	return v, nil
}

// encode writes v with sorted keys (encoding/json sorts a map's), without
// HTML escapes; indent "" is compact.
func encode(v any, indent string) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
