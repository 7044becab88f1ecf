package caddymodule

import (
	"context"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
	"github.com/edgemcp/edgemcp/caddymodule/session"
	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
)

// fastShell is the handler as the fast path sees it (fastpath.Shell). It
// is one pointer, so that passing it as an interface allocates nothing.
type fastShell struct{ h *Handler }

var _ fastpath.Shell = fastShell{}

// newFastPath is the fast path of this endpoint, before its mcp-go server
// exists (newMCPServer attaches it).
func (h *Handler) newFastPath() *fastpath.Server {
	return fastpath.New(fastShell{h}, fastpath.Options{
		ServerInfo:      mcp.Implementation{Name: h.ServerName, Version: h.ServerVersion},
		ErrorsAsResults: h.ErrorMode == errorModeResult,
		FullErrorDetail: h.ErrorDetail == errorDetailFull,
		ListFilter:      len(h.providers) > 0, // only auth hides a tool from tools/list
		DirectCalls:     telemetry.DirectCalls,
		DirectLists:     telemetry.DirectLists,
		Tasks:           h.taskOptions(),
	})
}

func (s fastShell) Registry() fastpath.Registry { return s.h.tools() }

func (s fastShell) StartCall(ctx context.Context, reg fastpath.Registry, name string) (context.Context, fastpath.Record) {
	return s.h.startCall(ctx, reg.(*registry), name)
}

func (s fastShell) UnknownTool(ctx context.Context, call *fastpath.Call) {
	s.h.recordUnknownTool(ctx, call)
}

func (s fastShell) Listable(ctx context.Context, t *pipeline.Tool) bool { return s.h.callable(ctx, t) }

func (s fastShell) SessionLive(r *http.Request) bool { return session.CheckOf(r).Live() }

func (s fastShell) SealEvent(p []byte, session string) []byte {
	return s.h.sessionIDs.RequestIDs().SealEvent(p, session)
}

func (s fastShell) RequestID(ctx context.Context) string { return telemetry.RequestID(ctx) }

// registryOf is the tool set the request of ctx resolved (one per call,
// fastpath.Call.Registry), else the current one.
func (h *Handler) registryOf(ctx context.Context) *registry {
	if c := fastpath.CallFrom(ctx); c != nil && c.Registry != nil {
		return c.Registry.(*registry)
	}
	return h.tools()
}

// runTool runs a call of the tool name on the request's tool set
// (fastpath.Server.RunTool): call_tool, and the tests.
func (h *Handler) runTool(ctx context.Context, name string, args map[string]any, info *pipeline.RequestInfo) (*mcp.CallToolResult, *pipeline.Error) {
	return h.fast.RunTool(ctx, h.registryOf(ctx), name, args, info)
}
