package caddymodule

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/caddymodule/redact"
	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
)

// BenchmarkCallTelemetry prints what the telemetry adds to one call, on a
// tool whose execution costs nothing (so the figures are the overhead
// alone): the bare pipeline and encoding (what runTool did before), then
// runTool with metrics and the log line off (Caddy at level ERROR), with
// the info line JSON-encoded (and scrubbed of a config's secrets), and
// traced by an SDK provider.
//
//	go test ./caddymodule -run '^$' -bench BenchmarkCallTelemetry -benchtime=2s -benchmem
func BenchmarkCallTelemetry(b *testing.B) {
	tool := &pipeline.Tool{
		Name:   "bench",
		Inputs: mustInputs(b),
		Executor: stageFunc{exec: func(c *pipeline.Call) (*pipeline.Result, error) {
			return &pipeline.Result{Value: []map[string]any{{"id": 1, "name": "Ada"}}}, nil
		}},
	}
	args := map[string]any{"id": 1}
	info := &pipeline.RequestInfo{ProtocolVersion: "2025-06-18"}
	newHandler := func(level zapcore.Level) *Handler {
		h, _ := unitHandler(b, tool)
		enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
		h.logger = zap.New(zapcore.NewCore(enc, zapcore.AddSync(io.Discard), level))
		h.calls = telemetry.NewRecorder(h.logger)
		return h
	}

	b.Run("bare", func(b *testing.B) {
		h := newHandler(zapcore.ErrorLevel)
		b.ReportAllocs()
		for b.Loop() {
			res, perr := h.tools().engine.Call(context.Background(), "bench", args, info)
			if perr != nil {
				b.Fatal(perr)
			}
			_, _ = jsonrpc.EncodeResult(res, info.ProtocolVersion)
		}
	})
	run := func(b *testing.B, h *Handler, ctx context.Context) {
		b.ReportAllocs()
		for b.Loop() {
			if _, perr := h.runTool(ctx, "bench", args, info); perr != nil {
				b.Fatal(perr)
			}
		}
	}
	b.Run("metrics", func(b *testing.B) { run(b, newHandler(zapcore.ErrorLevel), context.Background()) })
	b.Run("metrics+info-log", func(b *testing.B) { run(b, newHandler(zapcore.InfoLevel), context.Background()) })
	b.Run("metrics+info-log-scrubbed", func(b *testing.B) {
		// A config with secrets: every line is scrubbed of them (redact.Scrubber).
		h := newHandler(zapcore.InfoLevel)
		_, r := redact.JSON(json.RawMessage(`{"credentials":[{"kind":"bearer","token":"bearer-token-91ce07aa"}],"headers":{"X-Key":"header-key-44d1c8e2"},"spec":"https://s.example/o.json?key=query-key-5e8a2b7c"}`))
		h.logger = r.Scrubber().Logger(h.logger)
		h.calls = telemetry.NewRecorder(h.logger)
		run(b, h, context.Background())
	})
	b.Run("metrics+traced", func(b *testing.B) {
		tp := trace.NewTracerProvider(trace.WithBatcher(tracetest.NewNoopExporter()))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		ctx, span := tp.Tracer("caddy").Start(context.Background(), "request")
		defer span.End()
		run(b, newHandler(zapcore.ErrorLevel), ctx)
	})
}

func mustInputs(tb testing.TB) *pipeline.InputSet {
	in, err := pipeline.NewInput(pipeline.InputSpec{Name: "id", Type: "int", Required: true})
	if err != nil {
		tb.Fatal(err)
	}
	set, err := pipeline.NewInputSet([]*pipeline.Input{in})
	if err != nil {
		tb.Fatal(err)
	}
	return set
}
