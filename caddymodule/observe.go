package caddymodule

import (
	"context"
	"encoding/json"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
)

// provisionObservability registers the metrics in this config's registry,
// makes the handler's call recorder and exposes the connectors' pools
// (per-tool telemetry is the registry's). Called once from Provision. A
// metric name taken by another module costs the metrics, not the endpoint.
func (h *Handler) provisionObservability(ctx caddy.Context, conns map[string]connectorRef) {
	if err := telemetry.Register(ctx.GetMetricsRegistry()); err != nil {
		h.logger.Warn("edgemcp metrics not registered", zap.Error(err))
	}
	h.calls = telemetry.NewRecorder(h.logger)
	for name, ref := range conns {
		var conn any = ref.conn
		if ref.cmd != nil {
			conn = ref.cmd
		}
		// SQL connectors reach tools through the connector guard
		// (connguard); the pool statistics are the wrapped connector's.
		if g, ok := conn.(interface{ Unwrap() pipeline.SQLConnector }); ok {
			conn = g.Unwrap()
		}
		if p, ok := conn.(pipeline.PoolStatser); ok {
			telemetry.ExposeConnectorPool(h, name, ref.config.Type, p)
		}
	}
}

// startCall opens the telemetry of one tools/call of name (Recorder.Start)
// and returns the context the pipeline runs in.
func (h *Handler) startCall(ctx context.Context, name string) (context.Context, *telemetry.Call) {
	return h.calls.Start(ctx, h.tools().obs[name], jsonrpcIDOf(ctx))
}

// jsonrpcIDOf is the id of the tools/call being served (nil when not
// known), as decoded.
func jsonrpcIDOf(ctx context.Context) any {
	if st := callStateFrom(ctx); st != nil {
		return st.id
	}
	return nil
}

// respond is the response stage (encodeResult) under its own span.
func respond(ctx context.Context, rec *telemetry.Call, res *pipeline.Result, version string) (*mcp.CallToolResult, *pipeline.Error) {
	end := rec.Respond(ctx)
	out, perr := encodeResult(res, version)
	end(perr)
	return out, perr
}

// respondRaw is respond for a Canonical or Encoded result
// (encodeCanonical); nil, nil when respond must encode it after all.
func (h *Handler) respondRaw(ctx context.Context, rec *telemetry.Call, res *pipeline.Result, version string) (json.RawMessage, *pipeline.Error) {
	end := rec.Respond(ctx)
	out, perr := encodeCanonical(res, version, &h.serverInfo)
	end(perr)
	return out, perr
}

// recordUnknownTool counts and logs a tools/call of a name that resolves
// to no tool. mcp-go answers it (with the code the call state fixed), so
// runTool never sees it; without this an SRE would not see clients calling tools
// that are gone. The metric label is _unknown: the name is the client's
// text.
func (h *Handler) recordUnknownTool(ctx context.Context, st *callState) {
	_, rec := h.calls.Start(ctx, nil, st.id)
	rec.SetRequested(st.name)
	rec.Finish(ctx, st.failure())
}
