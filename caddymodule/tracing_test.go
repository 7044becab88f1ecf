package caddymodule

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP trace receiver: the endpoint Caddy's
// `tracing` exporter sends to when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// points at it. It keeps every span and every raw request body (searched
// for secrets byte for byte: protobuf stores strings verbatim).
type otlpReceiver struct {
	mu    sync.Mutex
	spans []span
	raw   [][]byte
	srv   *http.Server
	url   string
}

type span struct {
	trace, id, parent string
	name              string
	kind              tracepb.Span_SpanKind
	attrs             map[string]string
	status            tracepb.Status_StatusCode
	statusMessage     string
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &otlpReceiver{url: "http://" + l.Addr().String() + "/v1/traces"}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	t.Cleanup(func() { _ = r.srv.Close() })
	return r
}

func (r *otlpReceiver) serve(w http.ResponseWriter, req *http.Request) {
	var body io.Reader = http.MaxBytesReader(w, req.Body, 16<<20)
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	var msg collectortrace.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(raw, &msg)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.raw = append(r.raw, raw)
	for _, rs := range msg.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				r.spans = append(r.spans, span{
					trace: hex.EncodeToString(s.TraceId), id: hex.EncodeToString(s.SpanId),
					parent: hex.EncodeToString(s.ParentSpanId), name: s.Name, kind: s.Kind,
					attrs: attrMap(s.Attributes), status: s.GetStatus().GetCode(), statusMessage: s.GetStatus().GetMessage(),
				})
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = strconv.FormatInt(v.IntValue, 10)
		case *commonpb.AnyValue_DoubleValue:
			m[kv.Key] = strconv.FormatFloat(v.DoubleValue, 'f', -1, 64)
		case *commonpb.AnyValue_BoolValue:
			m[kv.Key] = strconv.FormatBool(v.BoolValue)
		default:
			m[kv.Key] = kv.Value.String()
		}
	}
	return m
}

// waitSpans waits until n spans named "tools/call ..." have arrived.
func (r *otlpReceiver) waitSpans(t *testing.T, n int) []span {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r.mu.Lock()
		got := append([]span(nil), r.spans...)
		r.mu.Unlock()
		calls := 0
		for _, s := range got {
			if strings.HasPrefix(s.name, "tools/call ") {
				calls++
			}
		}
		if calls >= n {
			// The children end before their parent, so they are in the
			// same or an earlier batch.
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d tools/call spans after 15s, want %d; spans: %+v", calls, n, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *otlpReceiver) rawContains(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.raw {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// TestTracingSpans runs the real Caddy with the `tracing` directive and an
// OTLP receiver: each tools/call is a span whose parent is Caddy's request
// span, with a child per stage and a client span per statement carrying
// the statement with placeholders, on both transport paths (mcp-go's and
// the direct one). No input value or connection secret is in any span.
func TestTracingSpans(t *testing.T) {
	obsSchema(t)
	recv := startOTLPReceiver(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", recv.url)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	t.Setenv("OTEL_TRACES_SAMPLER", "always_on")
	dsn, password := obsDSN(t)
	g := startGateway(t, obsCaddyfile(t, dsn, "tracing", ""))

	// The direct path: a plain JSON call on a session protocol version.
	direct := directCount()
	raw := g.rawSession(t, "2025-06-18")
	if rows := raw.call(t, "obs-find", map[string]any{"email": secretInput}).tool(t).rows(t); len(rows) != 1 {
		t.Fatalf("obs-find: %v", rows)
	}
	if resp := raw.call(t, "obs-get", map[string]any{"id": secretBadInput}); resp.Error == nil || resp.Error.Code != -32000 {
		t.Fatalf("obs-get with a string id: %+v", resp)
	}
	if resp := raw.call(t, "obs-broken", nil); resp.Error == nil || resp.Error.Code != -32000 {
		t.Fatalf("obs-broken: %+v", resp)
	}
	if directCount()-direct != 3 {
		t.Fatalf("%d calls took the direct path, want 3", directCount()-direct)
	}
	// mcp-go's path: its client speaks the stateless 2026-07-28 core, and
	// a progress token keeps the call off the direct path.
	c := g.mcpClient(t)
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "obs-find", map[string]any{"email": secretInput}
	req.Params.Meta = &mcp.Meta{ProgressToken: "p"}
	if _, err := c.CallTool(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if directCount()-direct != 3 {
		t.Fatal("the mcp-go client's call with a progress token took the direct path")
	}

	spans := recv.waitSpans(t, 4)
	byID := map[string]span{}
	for _, s := range spans {
		byID[s.id] = s
	}
	children := func(parent span) map[string]span {
		m := map[string]span{}
		for _, s := range spans {
			if s.parent == parent.id && s.trace == parent.trace {
				m[s.name] = s
			}
		}
		return m
	}
	var calls []span
	for _, s := range spans {
		if strings.HasPrefix(s.name, "tools/call ") {
			calls = append(calls, s)
		}
	}
	for i, call := range calls {
		// The parent is Caddy's server span for the HTTP request.
		parent, ok := byID[call.parent]
		if !ok || parent.kind != tracepb.Span_SPAN_KIND_SERVER || parent.trace != call.trace {
			t.Fatalf("call span %d (%s): parent %q is not Caddy's request span (spans: %+v)", i, call.name, call.parent, spans)
		}
		want := map[string]string{"mcp.method.name": "tools/call", "edgemcp.connector.name": "obsdb", "edgemcp.connector.type": "postgres"}
		for k, v := range want {
			if call.attrs[k] != v {
				t.Errorf("call span %s: %s = %q, want %q", call.name, k, call.attrs[k], v)
			}
		}
		for _, k := range []string{"gen_ai.tool.name", "edgemcp.outcome", "edgemcp.duration_ms"} {
			if call.attrs[k] == "" {
				t.Errorf("call span %s lacks %s: %v", call.name, k, call.attrs)
			}
		}
	}
	if len(calls) != 4 {
		t.Fatalf("%d call spans, want 4", len(calls))
	}

	// 1. obs-find, direct path: validation, execution (with the query), response.
	find := calls[0]
	if find.name != "tools/call obs-find" || find.attrs["edgemcp.outcome"] != "ok" || find.attrs["jsonrpc.request.id"] != "1" {
		t.Fatalf("first call span: %+v", find)
	}
	stages := children(find)
	for _, name := range []string{"edgemcp.input_validation", "edgemcp.execution", "edgemcp.response"} {
		s, ok := stages[name]
		if !ok {
			t.Fatalf("obs-find has no %s span; children: %v", name, stages)
		}
		if s.attrs["edgemcp.outcome"] != "ok" || s.attrs["edgemcp.stage"] != strings.TrimPrefix(name, "edgemcp.") || s.attrs["gen_ai.tool.name"] != "obs-find" {
			t.Errorf("%s: %v", name, s.attrs)
		}
	}
	if len(stages) != 3 {
		t.Errorf("obs-find children: %v (auth and mappers are not configured: no spans)", stages)
	}
	q, ok := children(stages["edgemcp.execution"])["query obsdb"]
	if !ok {
		t.Fatalf("no query span under execution: %v", children(stages["edgemcp.execution"]))
	}
	if q.kind != tracepb.Span_SPAN_KIND_CLIENT || q.attrs["db.system.name"] != "postgresql" ||
		q.attrs["db.query.text"] != "SELECT id, name FROM obs_telemetry.users WHERE email = $1" {
		t.Errorf("query span: kind %v, attrs %v", q.kind, q.attrs)
	}

	// 2. obs-get with a bad input: fails in validation, no execution.
	bad := calls[1]
	if bad.attrs["edgemcp.outcome"] != "error" || bad.attrs["rpc.jsonrpc.error_code"] != "-32000" ||
		bad.attrs["edgemcp.error.stage"] != "input_validation" || bad.status != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("failed call span: %+v", bad)
	}
	badStages := children(bad)
	if v := badStages["edgemcp.input_validation"]; v.status != tracepb.Status_STATUS_CODE_ERROR || v.attrs["edgemcp.outcome"] != "error" {
		t.Errorf("validation span of the failed call: %+v", v)
	}
	if _, ran := badStages["edgemcp.execution"]; ran {
		t.Error("execution ran after a failed validation")
	}

	// 3. obs-broken: the query fails.
	broken := calls[2]
	if broken.attrs["edgemcp.error.stage"] != "execution" || broken.status != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("broken call span: %+v", broken)
	}
	bq := children(children(broken)["edgemcp.execution"])["query obsdb"]
	if bq.status != tracepb.Status_STATUS_CODE_ERROR || bq.attrs["db.query.text"] != "SELECT * FROM obs_telemetry.missing" {
		t.Errorf("failed query span: %+v", bq)
	}

	// 4. obs-find through mcp-go: the same structure.
	viaMCPGo := calls[3]
	if viaMCPGo.name != "tools/call obs-find" || viaMCPGo.attrs["edgemcp.outcome"] != "ok" {
		t.Fatalf("mcp-go path call span: %+v", viaMCPGo)
	}
	if _, ok := children(children(viaMCPGo)["edgemcp.execution"])["query obsdb"]; !ok {
		t.Errorf("mcp-go path: no query span under execution: %v", children(viaMCPGo))
	}

	for _, secret := range []string{secretInput, secretBadInput, password, dsn, "no such table", `relation "obs_telemetry.missing"`} {
		if recv.rawContains(secret) {
			t.Errorf("a span holds %q", secret)
		}
	}
	for _, s := range spans {
		if strings.Contains(fmt.Sprint(s.attrs), secretInput) || strings.Contains(s.statusMessage, secretBadInput) {
			t.Errorf("span %s leaks an input: %+v", s.name, s)
		}
	}
}
