package override

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/edgemcp/edgemcp/pipeline"
)

// A proxied MCP tool is published as its upstream's own tools/list entry
// (pipeline.Tool's Listing), with only its name and input schema replaced
// by the gateway's. An override of its description or hints must
// therefore change that entry too, or clients would read the upstream's.

// schemaArguments are the names of t's input schema's properties, and
// those it requires.
func schemaArguments(t *pipeline.Tool) (props, required map[string]bool) {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	_ = json.Unmarshal(t.Schema(), &schema) // not an object schema: no arguments
	props, required = map[string]bool{}, map[string]bool{}
	for name := range schema.Properties {
		props[name] = true
	}
	for _, name := range schema.Required {
		required[name] = true
	}
	return props, required
}

// setListing sets t's Listing's member key to v, when t has a Listing.
func setListing(t *pipeline.Tool, key string, v any) error {
	if t.Listing == nil {
		return nil
	}
	entry, err := members(t.Listing)
	if err != nil {
		return err
	}
	if entry[key], err = encode(v); err != nil {
		return err
	}
	t.Listing, err = encode(entry)
	return err
}

// setListingHints writes t's hints into its Listing's annotations, the
// upstream's other annotations (a title) kept.
func setListingHints(t *pipeline.Tool) error {
	if t.Listing == nil {
		return nil
	}
	entry, err := members(t.Listing)
	if err != nil {
		return err
	}
	ann := map[string]json.RawMessage{}
	if raw := entry["annotations"]; len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if ann, err = members(raw); err != nil {
			return err
		}
	}
	a := t.Annotations
	for key, v := range map[string]*bool{"readOnlyHint": a.ReadOnly, "destructiveHint": a.Destructive, "idempotentHint": a.Idempotent, "openWorldHint": a.OpenWorld} {
		if v != nil {
			ann[key], _ = encode(*v)
		}
	}
	if entry["annotations"], err = encode(ann); err != nil {
		return err
	}
	t.Listing, err = encode(entry)
	return err
}

func members(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("the upstream's entry is not a JSON object")
	}
	return m, nil
}

// encode is v compact, without HTML escapes: a Listing is written into SSE
// events as it is, where a line break would end the data.
func encode(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
