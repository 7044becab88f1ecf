package fastpath

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/pipeline"
)

// Inspect reads a tools/call message into its Call, resolving the tool
// set once for it (Call.Registry); nil for anything else. An unknown tool
// is marked failed at once: mcp-go will answer it with -32602, which the
// Writer turns into -32601.
func (s *Server) Inspect(body []byte, r *http.Request) *Call {
	var msg jsonrpc.CallMessage[map[string]any]
	argsOK := jsonrpc.DecodeCall(body, &msg) // one pass when the arguments are an object, as they are for nearly every call
	if !argsOK {
		var raw jsonrpc.CallMessage[json.RawMessage]
		if json.Unmarshal(body, &raw) != nil {
			return nil
		}
		msg.JSONRPC, msg.ID, msg.Method, msg.Params.Name, msg.Params.Meta = raw.JSONRPC, raw.ID, raw.Method, raw.Params.Name, raw.Params.Meta
		msg.Params.InputResponses, msg.Params.RequestState, msg.Params.Task = raw.Params.InputResponses, raw.Params.RequestState, raw.Params.Task
		argsOK = len(raw.Params.Arguments) == 0 || string(raw.Params.Arguments) == "null"
	}
	if msg.Method != "tools/call" || len(msg.ID) == 0 {
		return nil
	}
	c := &Call{Name: msg.Params.Name, Header: r.Header, RemoteAddr: r.RemoteAddr, TLS: r.TLS, RawID: msg.ID, Args: msg.Params.Arguments}
	c.Conversation = conversation(msg.Params.Meta)
	c.ID = jsonrpc.DecodeID(msg.ID)
	c.task, c.meta = msg.Params.Task, msg.Params.Meta
	c.answers, c.state = msg.Params.InputResponses, msg.Params.RequestState
	_, idIsString := c.ID.(string)
	_, idIsNumber := c.ID.(float64)
	// _meta (progress tokens, trace context; on 2026-07-28 anything beyond
	// the protocol's own fields) and anything unusual are left to mcp-go.
	c.direct = msg.JSONRPC == "2.0" && (idIsString || idIsNumber) && argsOK && msg.Params.Plain()
	if c.direct && len(msg.Params.Meta) > 0 {
		// Only a sessionless request's own fields (sessionlessVersion).
		c.sessionless = s.sessionlessVersion(msg.Params.Meta, r, c.Name)
		c.direct = c.sessionless != ""
	}
	c.Registry = s.shell.Registry()
	if !c.Registry.Tools().resolves(c.Name) {
		c.Fail(&pipeline.Error{Code: pipeline.CodeToolNotFound, Stage: pipeline.StageResolution,
			Message: fmt.Sprintf("tool %q not found", c.Name)})
		s.shell.UnknownTool(r.Context(), c)
	}
	return c
}
