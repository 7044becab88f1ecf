package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
	"github.com/edgemcp/edgemcp/pipeline"
)

// This file is the one place where a tools/call becomes telemetry
// (docs/architecture.md, Observability): a span with a child per stage (and per statement), the metrics, and
// the info log line. Both transport paths (mcp-go's handler and fastpath.Server.Answer)
// run a call through runTool, which opens a callRecord here and closes it
// when the response is encoded.
//
// What is recorded: tool name, stage, connector name and type, cache
// status, outcome, JSON-RPC code, durations, the statement text with its
// placeholders. What never is: input values, results, credentials,
// connection strings, error messages (they may quote an input).

// tracerName identifies edgemcp's instrumentation in every span.
const tracerName = "github.com/edgemcp/edgemcp"

// Span attribute keys. Where OpenTelemetry's semantic conventions (MCP,
// GenAI, database, JSON-RPC) name a concept, their key is used.
const (
	attrMethod      = "mcp.method.name"
	attrTool        = "gen_ai.tool.name"
	attrOperation   = "gen_ai.operation.name"
	attrRequestID   = "jsonrpc.request.id"
	attrCode        = "rpc.jsonrpc.error_code"
	attrErrorType   = "error.type"
	attrDBSystem    = "db.system.name"
	attrDBText      = "db.query.text"
	attrHTTPMethod  = "http.request.method"
	attrURLTemplate = "url.template"
	attrServer      = "server.address"
	attrStage       = "edgemcp.stage"
	attrOutcome     = "edgemcp.outcome"
	attrCache       = "edgemcp.cache"
	attrConnector   = "edgemcp.connector.name"
	attrConnType    = "edgemcp.connector.type"
	attrDurationMS  = "edgemcp.duration_ms"
	attrErrorStage  = "edgemcp.error.stage"
)

// toolObs is what telemetry needs to know about one tool, computed once at
// provision so a call does no label hashing on its success path.
type toolObs struct {
	name          string
	connector     string // connector name; "" for tools without one
	connectorType string // postgres, sqlite, ...
	metrics       *toolMetrics
}

// unknownToolLabel labels calls of names that resolve to no tool: the name
// is the client's, so it must not become a metric label.
const unknownToolLabel = "_unknown"

// provisionObservability registers the metrics in this config's registry
// and exposes the pools (per-tool telemetry is the registry's). Called once from Provision. A metric
// name taken by another module costs the metrics, not the endpoint.
func (h *Handler) provisionObservability(ctx caddy.Context, conns map[string]connectorRef) {
	if err := registerMetrics(ctx.GetMetricsRegistry()); err != nil {
		h.logger.Warn("edgemcp metrics not registered", zap.Error(err))
	}
	h.unknownTool = &toolObs{name: unknownToolLabel, metrics: newToolMetrics(unknownToolLabel)}
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
			h.exposeConnectorPool(name, ref.config.Type, p)
		}
	}
}

var _ pipeline.Observer = (*callRecord)(nil)

// callRecord follows one call: it is the pipeline's Observer for the call
// and holds the call span.
type callRecord struct {
	h      *Handler
	tool   *toolObs
	start  time.Time
	tracer trace.Tracer // nil when the request is not traced
	span   trace.Span
	call   *pipeline.Call // set when the first stage starts
	// requested is the name a client asked for when it resolved to no
	// tool, cut short: for the log line, never a label.
	requested string
	// open are the stage and query spans not ended yet: a panic in a stage
	// skips its end, and finish ends them so the trace shows where.
	open []trace.Span
}

// startCall opens the record (and the call span, when the request is
// traced) and returns the context the pipeline runs in.
func (h *Handler) startCall(ctx context.Context, reg *registry, name string) (context.Context, *callRecord) {
	rec := &callRecord{h: h, tool: reg.obs[name], start: time.Now()}
	if rec.tool == nil {
		rec.tool = h.unknownTool
	}
	// The tracer comes from Caddy's request span (the `tracing` directive);
	// without one the request is not traced and no span is started. The
	// global provider is never used.
	if parent := trace.SpanFromContext(ctx); parent.SpanContext().IsValid() {
		rec.tracer = parent.TracerProvider().Tracer(tracerName)
		attrs := []attribute.KeyValue{
			attribute.String(attrMethod, "tools/call"),
			attribute.String(attrOperation, "execute_tool"),
			attribute.String(attrTool, rec.tool.name),
		}
		if rec.tool.connector != "" {
			attrs = append(attrs, attribute.String(attrConnector, rec.tool.connector), attribute.String(attrConnType, rec.tool.connectorType))
		}
		if id := jsonrpcID(ctx); id != "" {
			attrs = append(attrs, attribute.String(attrRequestID, id))
		}
		ctx, rec.span = rec.tracer.Start(ctx, "tools/call "+rec.tool.name, trace.WithAttributes(attrs...))
	}
	return pipeline.WithObserver(ctx, rec), rec
}

// Stage implements pipeline.Observer.
func (rec *callRecord) Stage(ctx context.Context, call *pipeline.Call, stage pipeline.Stage) (context.Context, func(error)) {
	if call != nil {
		rec.call = call
	}
	label := stageLabel(stage)
	start := time.Now()
	var span trace.Span
	if rec.tracer != nil {
		ctx, span = rec.tracer.Start(ctx, "edgemcp."+label, trace.WithAttributes(
			attribute.String(attrStage, label), attribute.String(attrTool, rec.tool.name)))
		rec.open = append(rec.open, span)
	}
	return ctx, func(err error) {
		d := time.Since(start)
		rec.tool.metrics.stage(label).Observe(d.Seconds())
		if span != nil {
			rec.ended(span)
			endSpan(span, d, err)
		}
	}
}

// Query implements pipeline.Observer: every outbound call (a statement, a
// Redis command, a source's HTTP request) is timed in
// edgemcp_outbound_duration_seconds and, when the request is traced, gets
// a client span. Its text holds placeholders, never values.
func (rec *callRecord) Query(ctx context.Context, _ *pipeline.Call, q pipeline.QueryInfo) (context.Context, func(error)) {
	start := time.Now()
	hist := rec.tool.metrics.outboundCalls(q.System)
	if rec.tracer == nil {
		return ctx, func(error) { hist.Observe(time.Since(start).Seconds()) }
	}
	var name string
	attrs := []attribute.KeyValue{attribute.String(attrConnector, rec.tool.connector), attribute.String(attrTool, rec.tool.name)}
	if q.System == "http" {
		// OpenTelemetry's HTTP client span: "METHOD /path/{template}".
		method, tmpl, _ := strings.Cut(q.Statement, " ")
		name = q.Statement
		attrs = append(attrs, attribute.String(attrHTTPMethod, method), attribute.String(attrURLTemplate, tmpl))
		if q.Server != "" {
			attrs = append(attrs, attribute.String(attrServer, q.Server))
		}
	} else {
		name = "query"
		if rec.tool.connector != "" {
			name = "query " + rec.tool.connector
		}
		attrs = append(attrs, attribute.String(attrDBSystem, dbSystem(q.System)), attribute.String(attrDBText, q.Statement))
	}
	ctx, span := rec.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	rec.open = append(rec.open, span)
	return ctx, func(err error) {
		d := time.Since(start)
		hist.Observe(d.Seconds())
		rec.ended(span)
		endSpan(span, d, err)
	}
}

// ended forgets an open span that ends normally.
func (rec *callRecord) ended(span trace.Span) {
	for i := len(rec.open) - 1; i >= 0; i-- {
		if rec.open[i] == span {
			rec.open = append(rec.open[:i], rec.open[i+1:]...)
			return
		}
	}
}

// finish closes the record once the response is encoded: metrics, the
// call span's outcome, and the log line.
func (rec *callRecord) finish(ctx context.Context, perr *pipeline.Error) {
	d := time.Since(rec.start)
	cache := ""
	if rec.call != nil {
		cache = rec.call.CacheStatus
	}
	rec.tool.metrics.done(d, perr, cache)
	if rec.span != nil {
		if cache != "" {
			rec.span.SetAttributes(attribute.String(attrCache, cache))
		}
		if perr != nil {
			rec.span.SetAttributes(attribute.Int(attrCode, perr.Code), attribute.String(attrErrorStage, stageLabel(perr.Stage)))
		}
		var err error
		if perr != nil {
			err = perr
		}
		for i := len(rec.open) - 1; i >= 0; i-- { // innermost first
			endSpan(rec.open[i], time.Since(rec.start), err)
		}
		endSpan(rec.span, d, err)
	}
	rec.h.logCall(ctx, rec, d, cache, perr)
}

// endSpan records outcome and duration and ends span. The status carries
// the JSON-RPC code, never the error's message.
func endSpan(span trace.Span, d time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
		desc := "failed"
		var pe *pipeline.Error
		if errors.As(err, &pe) {
			desc = strconv.Itoa(pe.Code)
			if pe.Stage != "" {
				desc = stageLabel(pe.Stage) + " failed (" + desc + ")"
			}
		}
		span.SetAttributes(attribute.String(attrErrorType, errorType(err)))
		span.SetStatus(codes.Error, desc)
	}
	span.SetAttributes(attribute.String(attrOutcome, outcome), attribute.Float64(attrDurationMS, float64(d.Microseconds())/1000))
	span.End()
}

// errorType is the error.type attribute: the JSON-RPC code of a pipeline
// failure, else a generic class (a message could quote an input).
func errorType(err error) string {
	var pe *pipeline.Error
	if errors.As(err, &pe) {
		return strconv.Itoa(pe.Code)
	}
	var ctxErr interface{ Timeout() bool }
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ctxErr) && ctxErr.Timeout():
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}

// stageLabel is the metric label and span name of a stage:
// "input validation" → "input_validation".
func stageLabel(s pipeline.Stage) string {
	if l, ok := stageLabels[s]; ok {
		return l
	}
	return strings.ReplaceAll(string(s), " ", "_")
}

// stageLabels spares the known stages an allocation per call.
var stageLabels = func() map[pipeline.Stage]string {
	m := map[pipeline.Stage]string{}
	for _, s := range []pipeline.Stage{pipeline.StageResolution, pipeline.StageAuth, pipeline.StageInputTransform,
		pipeline.StageValidation, pipeline.StageApproval, pipeline.StageEnv, pipeline.StageExecution, pipeline.StageOutputTransform, pipeline.StageResponse} {
		m[s] = strings.ReplaceAll(string(s), " ", "_")
	}
	return m
}()

// dbSystem maps a dialect to OpenTelemetry's db.system.name value.
func dbSystem(dialect string) string {
	switch dialect {
	case "postgres":
		return "postgresql"
	case "mysql":
		return "mysql"
	}
	return dialect
}

// jsonrpcID is the id of the tools/call being served, as text. The
// client chooses it, so it is cut short before it reaches a span or a log.
func jsonrpcID(ctx context.Context) string {
	st := fastpath.CallFrom(ctx)
	if st == nil || st.ID == nil {
		return ""
	}
	switch v := st.ID.(type) {
	case string:
		return clip(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return clip(fmt.Sprint(st.ID))
}

// maxClientText bounds client-chosen text (ids, unknown tool names) in
// telemetry.
const maxClientText = 64

func clip(s string) string {
	if len(s) <= maxClientText {
		return s
	}
	return s[:maxClientText] + "…"
}

// recordUnknownTool counts and logs a tools/call of a name that resolves
// to no tool. mcp-go answers it (fastpath.Writer fixes the code), so runTool never
// sees it; without this an SRE would not see clients calling tools that
// are gone. The metric label is _unknown: the name is the client's text.
func (h *Handler) recordUnknownTool(ctx context.Context, st *fastpath.Call) {
	ctx = fastpath.WithCall(ctx, st)
	_, rec := h.startCall(ctx, st.Registry.(*registry), "")
	rec.requested = clip(st.Name)
	rec.finish(ctx, st.Failure())
}
