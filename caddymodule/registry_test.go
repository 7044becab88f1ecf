package caddymodule

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/pipeline"
)

// TestOneRegistryPerCall: a swap of the tool set while a call is under
// way (here as its span starts, after its telemetry took the tool's
// collectors and before the engine runs) does not change the set the call
// runs on: the call resolved one version and carries it to its end. The
// next call sees the new version.
func TestOneRegistryPerCall(t *testing.T) {
	tool := func(answer string) *pipeline.Tool {
		return &pipeline.Tool{Name: "versioned", Executor: stageFunc{exec: func(*pipeline.Call) (*pipeline.Result, error) {
			return &pipeline.Result{Value: answer}, nil
		}}}
	}
	h, _ := unitHandler(t, tool("first"))
	next, err := h.newRegistry([]*pipeline.Tool{tool("second")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := onSpanStart(func() { h.setTools(next) })
	info := &pipeline.RequestInfo{ProtocolVersion: "2025-03-26"}
	for _, want := range []string{`"first"`, `"second"`} {
		res, perr := h.runTool(ctx, "versioned", nil, info)
		if perr != nil {
			t.Fatalf("%v: %v", perr, perr.Unwrap())
		}
		if got, _ := res.Content[0].(mcp.TextContent); got.Text != want {
			t.Errorf("the call ran %s, want %s", got.Text, want)
		}
	}
}

// onSpanStart is a traced request context whose tracer runs fn whenever a
// span starts.
func onSpanStart(fn func()) context.Context {
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled})
	return trace.ContextWithSpan(context.Background(), &hookedSpan{sc: sc, provider: &hookedProvider{fn: fn}})
}

type hookedProvider struct {
	noop.TracerProvider
	fn func()
}

func (p *hookedProvider) Tracer(string, ...trace.TracerOption) trace.Tracer {
	return hookedTracer{fn: p.fn}
}

type hookedTracer struct {
	noop.Tracer
	fn func()
}

func (t hookedTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	t.fn()
	return t.Tracer.Start(ctx, name, opts...)
}

type hookedSpan struct {
	noop.Span
	sc       trace.SpanContext
	provider trace.TracerProvider
}

func (s *hookedSpan) SpanContext() trace.SpanContext       { return s.sc }
func (s *hookedSpan) TracerProvider() trace.TracerProvider { return s.provider }
