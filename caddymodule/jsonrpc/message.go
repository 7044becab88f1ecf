package jsonrpc

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/pipeline"
)

// ResultMessage is the JSON-RPC response carrying result, as
// json.Encoder writes it (id HTML-escaped, a newline at the end), put
// together without encoding/json going over the result again: it was
// encoded by json.Marshal (compact, HTML-escaped) already.
func ResultMessage(id, result json.RawMessage) []byte {
	var b bytes.Buffer
	b.Grow(len(result) + len(id) + 40)
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	json.HTMLEscape(&b, id)
	b.WriteString(`,"result":`)
	b.Write(result)
	b.WriteString("}\n")
	return b.Bytes()
}

// ErrorMessage is the JSON-RPC response carrying perr, as json.Encoder
// writes it.
func ErrorMessage(id json.RawMessage, perr *pipeline.Error) []byte {
	msg, _ := json.Marshal(struct {
		JSONRPC string                   `json:"jsonrpc"`
		ID      json.RawMessage          `json:"id"`
		Error   *mcp.JSONRPCErrorDetails `json:"error"`
	}{"2.0", id, ErrorObject(perr)})
	return append(msg, '\n')
}

// ErrorObject is a failure's JSON-RPC error object: an upstream's error
// passed on keeps its data too.
func ErrorObject(perr *pipeline.Error) *mcp.JSONRPCErrorDetails {
	e := &mcp.JSONRPCErrorDetails{Code: perr.Code, Message: perr.Error()}
	if len(perr.Data) > 0 {
		e.Data = perr.Data
	}
	return e
}

// WriteError answers a request mcp-go never saw.
func WriteError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": code, "message": msg},
	})
}

// Tool is the tools/list entry of a compiled tool, as mcp-go models it.
func Tool(t *pipeline.Tool) mcp.Tool {
	a := t.Annotations
	var exec *mcp.ToolExecution
	if t.Tasks != pipeline.TaskForbidden && (t.Approval == nil || t.TaskPassthrough) {
		// A gateway task, or an upstream's passed through (docs/tasks.md).
		// One that asks for approval first runs as a task only on
		// 2026-07-28, whose tools say nothing of tasks; the listing is
		// 2025-11-25's, where it does not (fastpath.Server.callAsTask).
		exec = &mcp.ToolExecution{TaskSupport: mcp.TaskSupport(t.Tasks)}
	}
	return mcp.Tool{
		Execution:       exec,
		Name:            t.Name,
		Title:           t.Title,
		Description:     t.Description,
		RawInputSchema:  t.Schema(),
		RawOutputSchema: t.OutputSchema,
		Annotations: mcp.ToolAnnotation{
			Title:           t.Title,
			ReadOnlyHint:    a.ReadOnly,
			DestructiveHint: a.Destructive,
			IdempotentHint:  a.Idempotent,
			OpenWorldHint:   a.OpenWorld,
		},
	}
}

// ToolEntry is the tools/list entry of a compiled tool, encoded: its own
// Listing (a source's text) with the gateway's name and input schema
// spliced in, else mcp-go's encoding of Tool.
func ToolEntry(t *pipeline.Tool) (json.RawMessage, error) {
	if t.Listing == nil {
		return json.Marshal(Tool(t))
	}
	name, err := json.Marshal(t.Name)
	if err != nil {
		return nil, err
	}
	out, err := WithMember(t.Listing, "name", name)
	if err != nil {
		return nil, err
	}
	return WithMember(out, "inputSchema", t.Schema())
}
