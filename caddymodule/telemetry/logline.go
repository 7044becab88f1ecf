package telemetry

import (
	"context"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/edgemcp/edgemcp/pipeline"
)

// log writes the one info line of a call: tool, outcome, code, stage
// of a failure, duration, cache status, the caller's subject, Caddy's
// request id (the same uuid as the access log's), the JSON-RPC id and, when
// traced, the trace id. Inputs, results and error messages stay out of it:
// a message can quote an input. The message and the internal cause (driver
// detail, a panic's stack) follow at debug.
func (rec *Call) log(ctx context.Context, d time.Duration, cache string, perr *pipeline.Error) {
	ce := rec.rec.logger.Check(zapcore.InfoLevel, "tool call")
	if ce == nil { // info is off, and so is debug
		return
	}
	outcome, code := "ok", 0
	if perr != nil {
		outcome, code = "error", perr.Code
	}
	fields := make([]zap.Field, 0, 12)
	fields = append(fields, zap.String("tool", rec.tool.name), zap.String("outcome", outcome), zap.Int("code", code))
	if rec.requested != "" {
		fields = append(fields, zap.String("requested_tool", rec.requested))
	}
	if perr != nil {
		fields = append(fields, zap.String("stage", stageLabel(perr.Stage)))
	}
	fields = append(fields, zap.Duration("duration", d))
	if cache != "" {
		fields = append(fields, zap.String("cache", cache))
	}
	if rec.call != nil && rec.call.Identity != nil && rec.call.Identity.Subject != "" {
		fields = append(fields, zap.String("subject", rec.call.Identity.Subject))
	}
	if id := RequestID(ctx); id != "" {
		fields = append(fields, zap.String("request_id", id))
	}
	if id := idText(rec.id); id != "" {
		fields = append(fields, zap.String("jsonrpc_id", id))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		fields = append(fields, zap.String("trace_id", sc.TraceID().String()))
	}
	ce.Write(fields...)
	if perr != nil {
		if de := rec.rec.logger.Check(zapcore.DebugLevel, "tool call failed"); de != nil {
			fields = append(fields, zap.String("message", perr.Message))
			if perr.Cause != nil {
				fields = append(fields, zap.String("cause", perr.Cause.Error()))
			}
			de.Write(fields...)
		}
	}
}

// RequestID is Caddy's id of the HTTP request ({http.request.uuid}); using
// it also puts the same uuid in the request's access log entry.
func RequestID(ctx context.Context) string {
	repl, ok := ctx.Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	if !ok {
		return ""
	}
	v, _ := repl.GetString("http.request.uuid")
	return v
}
