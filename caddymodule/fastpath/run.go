package fastpath

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/pipeline"
)

// ToolHandler is the mcp-go handler of the tool name. A pipeline failure
// is recorded on the request's Call, where the Writer turns mcp-go's
// generic -32603 into the documented code.
func (s *Server) ToolHandler(name string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, settle := withPeer(ctx, req, s.sessions)
		defer settle()
		c := CallFrom(ctx)
		args := req.GetArguments()
		if c != nil && c.Name == req.Params.Name && c.Args != nil {
			args = c.Args // decoded with UseNumber: integers beyond 2^53 stay exact
		}
		// A server's own result (Verbatim) is written by the Writer in
		// place of mcp-go's encoding of what is returned here, as the
		// direct path writes it (jsonrpc.EncodeVerbatim): the Writer
		// rewrites the answer to c's request, so only that request may.
		mode := decoded
		if c != nil && c.Name == req.Params.Name {
			mode = verbatimRaw
		}
		out, raw, perr := s.callTool(ctx, s.registryOf(c), name, args, RequestInfo(ctx, c), mode)
		if perr != nil {
			if c != nil {
				c.Fail(perr)
			}
			return nil, perr
		}
		if raw != nil {
			c.PassResult(raw)
			return &mcp.CallToolResult{}, nil // a stand-in: the Writer writes raw in its place
		}
		return out, nil
	}
}

// registryOf is the tool set c resolved, else (a request the shell did
// not inspect) the current one.
func (s *Server) registryOf(c *Call) Registry {
	if c != nil && c.Registry != nil {
		return c.Registry
	}
	return s.shell.Registry()
}

// RunTool runs the pipeline of reg for one call and shapes the outcome:
// an MCP result, or the pipeline error; in error_mode result a failure is
// an isError result instead. With error_detail safe, a database's own
// error text is replaced by its code and the request id after the call is
// logged (the debug line keeps the full text).
func (s *Server) RunTool(ctx context.Context, reg Registry, name string, args map[string]any, info *pipeline.RequestInfo) (*mcp.CallToolResult, *pipeline.Error) {
	out, _, perr := s.callTool(ctx, reg, name, args, info, decoded)
	return out, perr
}

// rawMode is which results callTool hands back as the bytes to write
// instead of decoded into mcp-go's types.
type rawMode uint8

const (
	decoded rawMode = iota // none: RunTool (call_tool, a request without a Call)
	// verbatimRaw: a server's own result (pipeline.Result.Verbatim), for
	// mcp-go's handler, whose answer the Writer then rewrites.
	verbatimRaw
	// anyRaw: that, a Canonical or Encoded result, and a Value result
	// encoded here (jsonrpc.EncodedValueResult): the direct path.
	anyRaw
)

// callTool is RunTool for a caller that can write a result's bytes: the
// results mode names come back as those bytes (rawOut, with _meta and
// what the protocol version adds) instead of decoded into out.
func (s *Server) callTool(ctx context.Context, reg Registry, name string, args map[string]any, info *pipeline.RequestInfo, mode rawMode) (out *mcp.CallToolResult, rawOut json.RawMessage, perr *pipeline.Error) {
	ctx, rec := s.shell.StartCall(ctx, reg, name)
	res, perr := reg.Tools().Engine.Call(ctx, name, args, info)
	if perr == nil {
		if mode == anyRaw {
			res = jsonrpc.EncodedValueResult(res)
		}
		switch {
		case mode != decoded && res.Verbatim && res.Native != nil:
			rawOut = s.respondVerbatim(ctx, rec, res, info.ProtocolVersion)
		case mode == anyRaw && (res.Canonical || res.Encoded != nil):
			rawOut, perr = s.respondRaw(ctx, rec, res, info.ProtocolVersion)
		}
		if rawOut == nil && perr == nil {
			out, perr = respond(ctx, rec, res, info.ProtocolVersion)
		}
	}
	rec.Finish(ctx, perr)
	if perr == nil {
		return out, rawOut, nil
	}
	out, perr = s.shown(ctx, perr)
	return out, nil, perr
}

// shown is a call's failure as the client gets it: with error_detail
// safe, a database's own text replaced by its code and the request id;
// in error_mode result, an isError result instead.
func (s *Server) shown(ctx context.Context, perr *pipeline.Error) (*mcp.CallToolResult, *pipeline.Error) {
	if !s.opts.FullErrorDetail {
		perr = perr.WithoutServerText(s.shell.RequestID(ctx))
	}
	if s.opts.ErrorsAsResults {
		res := mcp.NewToolResultError(perr.Error())
		var me pipeline.MetaError
		if errors.As(perr, &me) {
			jsonrpc.AddMeta(res, me.ErrorMeta())
		}
		return res, nil
	}
	return nil, perr
}

// respond is the response stage (jsonrpc.EncodeResult) under its own span.
func respond(ctx context.Context, rec Record, res *pipeline.Result, version string) (*mcp.CallToolResult, *pipeline.Error) {
	_, end := rec.Stage(ctx, nil, pipeline.StageResponse)
	out, perr := jsonrpc.EncodeResult(res, version)
	if perr != nil {
		end(perr)
	} else {
		end(nil)
	}
	return out, perr
}

// respondRaw is respond for a Canonical or Encoded result
// (jsonrpc.EncodeCanonical); nil, nil when respond must encode it after
// all.
func (s *Server) respondRaw(ctx context.Context, rec Record, res *pipeline.Result, version string) (json.RawMessage, *pipeline.Error) {
	_, end := rec.Stage(ctx, nil, pipeline.StageResponse)
	out, perr := jsonrpc.EncodeCanonical(res, version, &s.opts.ServerInfo)
	if perr != nil {
		end(perr)
	} else {
		end(nil)
	}
	return out, perr
}

// respondVerbatim is respond for a Verbatim result
// (jsonrpc.EncodeVerbatim); nil when respond must decode it after all.
func (s *Server) respondVerbatim(ctx context.Context, rec Record, res *pipeline.Result, version string) json.RawMessage {
	_, end := rec.Stage(ctx, nil, pipeline.StageResponse)
	out := jsonrpc.EncodeVerbatim(res, version, &s.opts.ServerInfo)
	end(nil)
	return out
}

// RequestInfo is what the pipeline gets of the HTTP request of a call,
// with the conversation guardrails across calls key on (Session,
// Conversation).
func RequestInfo(ctx context.Context, c *Call) *pipeline.RequestInfo {
	info := &pipeline.RequestInfo{ProtocolVersion: protocolVersion(ctx, c)}
	if c != nil {
		info.Header, info.RemoteAddr, info.TLS = c.Header, c.RemoteAddr, c.TLS
		info.Conversation = c.Conversation
	}
	info.Session = sessionOf(ctx, c)
	return info
}

// sessionOf is the call's MCP session id, "" on a protocol without
// sessions. Under mcp-go it is the session mcp-go validated (on
// 2026-07-28 an ephemeral one without an id, whatever header was sent);
// on the direct path, which mcp-go never sees, the Mcp-Session-Id that
// directSession found live. Answer takes a sessionless request only
// when it is one (Call.sessionless), so a header there names no session.
func sessionOf(ctx context.Context, c *Call) string {
	if sess := server.ClientSessionFromContext(ctx); sess != nil {
		return sess.SessionID()
	}
	if c != nil && c.direct && c.sessionless == "" {
		return c.Header.Get("Mcp-Session-Id")
	}
	return ""
}

// protocolVersion is the client's MCP protocol version: the one negotiated
// on this session, else the MCP-Protocol-Version header (a session that
// began before a config reload is unknown to the new server).
func protocolVersion(ctx context.Context, c *Call) string {
	if v := server.RequestProtocolVersion(ctx); v != "" {
		return v
	}
	if c != nil {
		return c.Header.Get("Mcp-Protocol-Version")
	}
	return ""
}
