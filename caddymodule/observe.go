package caddymodule

import (
	"context"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
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

// startCall opens the telemetry of one tools/call of the tool name of reg
// (Recorder.Start) and returns the context the pipeline runs in.
func (h *Handler) startCall(ctx context.Context, reg *registry, name string) (context.Context, *telemetry.Call) {
	return h.calls.Start(ctx, reg.obs[name], jsonrpcIDOf(ctx))
}

// jsonrpcIDOf is the id of the tools/call being served (nil when not
// known), as decoded.
func jsonrpcIDOf(ctx context.Context) any {
	if st := fastpath.CallFrom(ctx); st != nil {
		return st.ID
	}
	return nil
}

// recordUnknownTool counts and logs a tools/call of a name that resolves
// to no tool. mcp-go answers it (with the code fastpath.Writer fixes), so
// runTool never sees it; without this an SRE would not see clients calling tools
// that are gone. The metric label is _unknown: the name is the client's
// text.
func (h *Handler) recordUnknownTool(ctx context.Context, st *fastpath.Call) {
	_, rec := h.calls.Start(ctx, nil, st.ID)
	rec.SetRequested(st.Name)
	rec.Finish(ctx, st.Failure())
}
