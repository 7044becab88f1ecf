// Package telemetry is where a tools/call becomes telemetry
// (docs/architecture.md, Observability): a span with a child per stage
// (and per outbound call), the Prometheus metrics, and the info log line.
// Both transport paths run a call between Recorder.Start and Call.Finish.
//
// What is recorded: tool name, stage, connector name and type, cache
// status, outcome, JSON-RPC code, durations, the statement text with its
// placeholders. What never is: input values, results, credentials,
// connection strings, error messages (they may quote an input).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
)

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

// Tool is what telemetry needs to know about one tool, made once per
// tool version (NewTool) so a call does no label hashing on its success
// path.
type Tool struct {
	name          string
	connector     string // connector name; "" for tools without one
	connectorType string // postgres, sqlite, ...
	metrics       *toolMetrics
}

// NewTool prepares the telemetry of tool name, run by the connector
// connector of type connectorType ("" for none).
func NewTool(name, connector, connectorType string) *Tool {
	return &Tool{name: name, connector: connector, connectorType: connectorType, metrics: newToolMetrics(name)}
}

// unknownToolLabel labels calls of names that resolve to no tool: the name
// is the client's, so it must not become a metric label.
const unknownToolLabel = "_unknown"

// Recorder opens the record of each call of one handler.
type Recorder struct {
	logger  *zap.Logger
	unknown *Tool
}

// NewRecorder returns a Recorder that writes its log lines to logger.
func NewRecorder(logger *zap.Logger) *Recorder {
	return &Recorder{logger: logger, unknown: NewTool(unknownToolLabel, "", "")}
}

var _ pipeline.Observer = (*Call)(nil)

// Call follows one call: it is the pipeline's Observer for the call and
// holds the call span.
type Call struct {
	rec    *Recorder
	tool   *Tool
	id     any // the JSON-RPC id, decoded; formatted only when shown
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

// Start opens the record of a call of tool (nil: a name that resolves to
// no tool) with JSON-RPC id (a string or a float64, as decoded; nil when
// unknown), and the call span when the request is traced; it returns the
// context the pipeline runs in.
func (r *Recorder) Start(ctx context.Context, tool *Tool, id any) (context.Context, *Call) {
	rec := &Call{rec: r, tool: tool, id: id, start: time.Now()}
	if rec.tool == nil {
		rec.tool = r.unknown
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
		if id := idText(id); id != "" {
			attrs = append(attrs, attribute.String(attrRequestID, id))
		}
		ctx, rec.span = rec.tracer.Start(ctx, "tools/call "+rec.tool.name, trace.WithAttributes(attrs...))
	}
	return pipeline.WithObserver(ctx, rec), rec
}

// SetRequested notes the name a client asked for that resolved to no
// tool, cut short: for the log line, never a label.
func (rec *Call) SetRequested(name string) { rec.requested = clip(name) }

// Stage implements pipeline.Observer.
func (rec *Call) Stage(ctx context.Context, call *pipeline.Call, stage pipeline.Stage) (context.Context, func(error)) {
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
func (rec *Call) Query(ctx context.Context, _ *pipeline.Call, q pipeline.QueryInfo) (context.Context, func(error)) {
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
func (rec *Call) ended(span trace.Span) {
	for i := len(rec.open) - 1; i >= 0; i-- {
		if rec.open[i] == span {
			rec.open = append(rec.open[:i], rec.open[i+1:]...)
			return
		}
	}
}

// Finish closes the record once the response is encoded: metrics, the
// call span's outcome, and the log line.
func (rec *Call) Finish(ctx context.Context, perr *pipeline.Error) {
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
	rec.log(ctx, d, cache, perr)
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

// idText is a JSON-RPC id as text. The client chooses it, so it is cut
// short before it reaches a span or a log.
func idText(id any) string {
	switch v := id.(type) {
	case nil:
		return ""
	case string:
		return clip(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return clip(fmt.Sprint(id))
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
