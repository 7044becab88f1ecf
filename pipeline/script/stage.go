package script

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dop251/goja"

	"github.com/edgemcp/edgemcp/pipeline"
)

// StageHandler names the execution stage of a script-backed tool in
// errors, logs and spans.
const StageHandler pipeline.Stage = "handler"

// InputMapper runs mappers.input: its return value replaces the inputs
// (the engine checks it is an object and validates it).
type InputMapper struct{ Script *Script }

func (m InputMapper) Transform(ctx context.Context, payload map[string]any) (any, error) {
	return m.Script.CallValue(ctx, payload)
}

// OutputMapper runs mappers.output: its return value replaces the results,
// as JSON text so that the keys keep the order the script wrote them in.
type OutputMapper struct{ Script *Script }

func (m OutputMapper) Transform(ctx context.Context, payload map[string]any) (any, error) {
	return m.Script.Call(ctx, payload)
}

// Handler is the execution stage of a script-backed tool: it gets
// {inputs, tool, auth} (inputs validated and defaulted) and its return
// value is the result. A full MCP tool result ({content: [...]}) is passed
// through as is.
type Handler struct{ Script *Script }

func (h Handler) Execute(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
	payload := pipeline.Payload(call, "inputs", call.Inputs)
	var res *pipeline.Result
	err := h.Script.run(ctx, payload, func(r *runner, v goja.Value) error {
		raw, err := r.toJSON(v, h.Script.opts.MaxOutput)
		if err != nil {
			return err
		}
		if isNative(v) {
			if err := checkNative(raw); err != nil {
				return &Error{Kind: KindBadValue, Message: "invalid MCP tool result: " + err.Error()}
			}
			res = &pipeline.Result{Native: raw}
			return nil
		}
		res = &pipeline.Result{Value: raw}
		return nil
	})
	if err != nil {
		return nil, pipeline.Fail(StageHandler, err, "%s", pipeline.SafeText(err, "script failed"))
	}
	return res, nil
}

// isNative: an object whose content is an array of objects that each have
// a string "type" is meant as an MCP tool result.
func isNative(v goja.Value) bool {
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" {
		return false
	}
	content, ok := obj.Get("content").(*goja.Object)
	if !ok || content.ClassName() != "Array" {
		return false
	}
	n := content.Get("length").ToInteger()
	for i := int64(0); i < n; i++ {
		block, ok := content.Get(fmt.Sprint(i)).(*goja.Object)
		if !ok {
			return false
		}
		if _, ok := block.Get("type").Export().(string); !ok {
			return false
		}
	}
	return true
}

// checkNative validates the content blocks the MCP schema defines, so a
// mistake is reported by the gateway instead of confusing the client.
func checkNative(raw json.RawMessage) error {
	var r struct {
		Content []map[string]any `json:"content"`
		IsError any              `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return err
	}
	if _, ok := r.IsError.(bool); r.IsError != nil && !ok {
		return fmt.Errorf("isError must be a boolean")
	}
	str := func(b map[string]any, k string) bool { s, ok := b[k].(string); return ok && s != "" }
	for i, b := range r.Content {
		typ, _ := b["type"].(string)
		var missing string
		switch typ {
		case "text":
			if _, ok := b["text"].(string); !ok {
				missing = "text"
			}
		case "image", "audio":
			if !str(b, "data") {
				missing = "data (base64)"
			} else if !str(b, "mimeType") {
				missing = "mimeType"
			}
		case "resource":
			res, _ := b["resource"].(map[string]any)
			if res == nil || !str(res, "uri") {
				missing = "resource.uri"
			} else if _, t := res["text"].(string); !t && !str(res, "blob") {
				missing = "resource.text or resource.blob"
			}
		case "resource_link":
			if !str(b, "uri") {
				missing = "uri"
			} else if !str(b, "name") {
				missing = "name"
			}
		default:
			return fmt.Errorf("content[%d]: unknown block type %q (want text, image, audio, resource or resource_link)", i, typ)
		}
		if missing != "" {
			return fmt.Errorf("content[%d] (%s): missing %s", i, typ, missing)
		}
	}
	return nil
}

// Interface guards.
var (
	_ pipeline.Transformer = InputMapper{}
	_ pipeline.Transformer = OutputMapper{}
	_ pipeline.Executor    = Handler{}
	_ pipeline.SafeError   = (*Error)(nil)
)
