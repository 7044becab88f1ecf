package telemetry

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/zap"
)

// Without Caddy's `tracing` the request context has no span: Start starts
// none. A name that resolves to nothing is labelled _unknown, never with
// the client's text.
func TestStartUntracedAndUnknown(t *testing.T) {
	r := NewRecorder(zap.NewNop())
	_, rec := r.Start(context.Background(), NewTool("unit-plain", "", ""), "id-1")
	if rec.tracer != nil || rec.span != nil {
		t.Fatal("a span was started without a traced request")
	}
	if rec.tool.name != "unit-plain" {
		t.Errorf("tool labelled %q", rec.tool.name)
	}
	_, rec = r.Start(context.Background(), nil, nil)
	rec.SetRequested("made-up-by-a-client")
	if rec.tool.name != unknownToolLabel || rec.requested != "made-up-by-a-client" {
		t.Errorf("unknown tool labelled %q (requested %q)", rec.tool.name, rec.requested)
	}
}

// Client-chosen text (a JSON-RPC id, an unknown tool's name) is cut short
// before it reaches a span or a log line.
func TestClientTextClipped(t *testing.T) {
	long := strings.Repeat("x", 10_000)
	got := idText(long)
	if len(got) > maxClientText+len("…") || !strings.HasPrefix(got, "xxx") {
		t.Fatalf("id of %d bytes", len(got))
	}
	if got := idText(float64(42)); got != "42" {
		t.Fatalf("numeric id %q", got)
	}
	var rec Call
	rec.SetRequested(long)
	if len(rec.requested) > maxClientText+len("…") {
		t.Fatalf("requested name of %d bytes", len(rec.requested))
	}
}
