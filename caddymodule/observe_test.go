package caddymodule

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
)

// Parts of a call that the Caddyfile cannot produce on this branch alone
// (the cache's status and the auth identity are set by stages other
// branches build) are tested on runTool directly, with the OpenTelemetry
// SDK recording spans in memory and zap's observer recording the log.

type stageFunc struct {
	exec func(*pipeline.Call) (*pipeline.Result, error)
}

func (s stageFunc) Execute(_ context.Context, c *pipeline.Call) (*pipeline.Result, error) {
	return s.exec(c)
}

type subjectAuth string

func (s subjectAuth) Authorize(context.Context, *pipeline.Call) (*pipeline.Identity, error) {
	return &pipeline.Identity{Subject: string(s), Claims: map[string]any{"token": "claim-secret-123"}}, nil
}

func unitHandler(t testing.TB, tools ...*pipeline.Tool) (*Handler, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	h := &Handler{logger: zap.New(core), ErrorMode: errorModeJSONRPC}
	h.fast = h.newFastPath()
	reg, err := h.newRegistry(tools)
	if err != nil {
		t.Fatal(err)
	}
	h.setTools(reg)
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	h.provisionObservability(ctx, nil)
	t.Cleanup(func() { telemetry.Unexpose(h) })
	return h, logs
}

// tracedContext is a request context with a recording parent span, as
// Caddy's `tracing` handler gives it.
func tracedContext(t *testing.T) (context.Context, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx, parent := tp.Tracer("caddy").Start(context.Background(), "request")
	t.Cleanup(func() { parent.End() })
	return ctx, exp
}

func TestCallRecordCacheAndSubject(t *testing.T) {
	tool := &pipeline.Tool{Name: "unit-cached", Auth: subjectAuth("alice"), Executor: stageFunc{exec: func(c *pipeline.Call) (*pipeline.Result, error) {
		c.CacheStatus = "hit"
		return &pipeline.Result{Value: []any{}}, nil
	}}}
	h, logs := unitHandler(t, tool)
	ctx, exp := tracedContext(t)
	hits := testutil.ToFloat64(telemetry.CacheRequests.WithLabelValues("unit-cached", "hit"))

	if _, perr := h.runTool(ctx, "unit-cached", map[string]any{}, &pipeline.RequestInfo{}); perr != nil {
		t.Fatal(perr)
	}
	if got := testutil.ToFloat64(telemetry.CacheRequests.WithLabelValues("unit-cached", "hit")) - hits; got != 1 {
		t.Errorf("cache hits went up by %v, want 1", got)
	}
	var call sdktrace.ReadOnlySpan
	names := []string{}
	for _, s := range exp.GetSpans().Snapshots() {
		names = append(names, s.Name())
		if s.Name() == "tools/call unit-cached" {
			call = s
		}
	}
	if call == nil {
		t.Fatalf("no call span in %v", names)
	}
	if !hasAttr(call.Attributes(), attribute.String("edgemcp.cache", "hit")) {
		t.Errorf("call span attributes: %v", call.Attributes())
	}
	if strings.Join(names, ",") != "edgemcp.authentication,edgemcp.execution,edgemcp.response,tools/call unit-cached" {
		t.Errorf("spans: %v", names)
	}
	entries := logs.FilterMessage("tool call").All()
	if len(entries) != 1 {
		t.Fatalf("%d log lines", len(entries))
	}
	f := entries[0].ContextMap()
	if entries[0].Level != zapcore.InfoLevel || f["cache"] != "hit" || f["subject"] != "alice" || f["outcome"] != "ok" ||
		f["trace_id"] != call.SpanContext().TraceID().String() {
		t.Errorf("log line: %v", f)
	}
	for _, e := range logs.All() {
		for _, v := range e.ContextMap() {
			if strings.Contains(strings.ToLower(toString(v)), "claim-secret") {
				t.Errorf("a claim reached the log: %v", e.ContextMap())
			}
		}
	}
}

// A panic's stack goes to the debug line only; the span and the info line
// carry the stage and code.
func TestCallRecordPanic(t *testing.T) {
	tool := &pipeline.Tool{Name: "unit-panics", Executor: stageFunc{exec: func(*pipeline.Call) (*pipeline.Result, error) {
		panic("unit panic")
	}}}
	h, logs := unitHandler(t, tool)
	ctx, exp := tracedContext(t)
	if _, perr := h.runTool(ctx, "unit-panics", nil, &pipeline.RequestInfo{}); perr == nil || perr.Code != pipeline.CodeStageFailed {
		t.Fatalf("want a -32000 failure, got %v", perr)
	}
	info := logs.FilterMessage("tool call").All()
	debug := logs.FilterMessage("tool call failed").All()
	if len(info) != 1 || len(debug) != 1 {
		t.Fatalf("log: %v", logs.All())
	}
	if f := info[0].ContextMap(); f["stage"] != "execution" || f["code"] != int64(-32000) || f["cause"] != nil {
		t.Errorf("info line: %v", f)
	}
	if cause := toString(debug[0].ContextMap()["cause"]); debug[0].Level != zapcore.DebugLevel || !strings.Contains(cause, "unit panic") || !strings.Contains(cause, "goroutine") {
		t.Errorf("debug line lacks the stack: %v", debug[0].ContextMap())
	}
	found := map[string]bool{}
	for _, s := range exp.GetSpans().Snapshots() {
		found[s.Name()] = true
		// The panicking stage's span is ended by the call, as a failure.
		if (s.Name() == "tools/call unit-panics" || s.Name() == "edgemcp.execution") &&
			(s.Status().Description != "execution failed (-32000)" || !hasAttr(s.Attributes(), attribute.String("edgemcp.outcome", "error"))) {
			t.Errorf("%s: %v %v", s.Name(), s.Status(), s.Attributes())
		}
	}
	if !found["tools/call unit-panics"] || !found["edgemcp.execution"] {
		t.Errorf("spans: %v", found)
	}
}

// Without Caddy's `tracing` the request context has no span: nothing is
// traced, metrics and the log line still are.
func TestCallRecordUntraced(t *testing.T) {
	tool := &pipeline.Tool{Name: "unit-plain", Executor: stageFunc{exec: func(*pipeline.Call) (*pipeline.Result, error) {
		return nil, errors.New("opaque driver detail")
	}}}
	h, logs := unitHandler(t, tool)
	before := testutil.ToFloat64(telemetry.CallsTotal.WithLabelValues("unit-plain", "error", "-32000"))
	ctx := context.Background()
	if _, perr := h.runTool(ctx, "unit-plain", nil, &pipeline.RequestInfo{}); perr == nil {
		t.Fatal("want a failure")
	}
	if len(logs.FilterMessage("tool call").All()) != 1 {
		t.Errorf("log: %v", logs.All())
	}
	// In error_mode result the failure reaches the client as an isError
	// result, and is still counted as the failure it is.
	h.ErrorMode = errorModeResult
	h.fast = h.newFastPath() // the fast path reads the settings when it is made
	if res, perr := h.runTool(ctx, "unit-plain", nil, &pipeline.RequestInfo{}); perr != nil || res == nil || !res.IsError {
		t.Fatalf("error_mode result: %v %v", res, perr)
	}
	if got := testutil.ToFloat64(telemetry.CallsTotal.WithLabelValues("unit-plain", "error", "-32000")) - before; got != 2 {
		t.Errorf("error calls went up by %v, want 2", got)
	}
	// A name that resolves to nothing is labelled _unknown, never with the
	// client's text (and no span starts untraced): telemetry.Recorder's
	// own tests.
}

func hasAttr(attrs []attribute.KeyValue, want attribute.KeyValue) bool {
	for _, a := range attrs {
		if a.Key == want.Key && a.Value == want.Value {
			return true
		}
	}
	return false
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}
