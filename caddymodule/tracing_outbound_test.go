package caddymodule

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestTracingOutboundCalls: every outbound call has one client span and
// one observation in edgemcp_outbound_duration_seconds, whatever the
// backend: an OpenAPI source's HTTP request ("GET /pets/{petId}", with
// method, URL template and server, never the values) and a Redis command
// (its name and "?" for each argument).
func TestTracingOutboundCalls(t *testing.T) {
	up := newPetsUpstream(t)
	recv := startOTLPReceiver(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", recv.url)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	t.Setenv("OTEL_TRACES_SAMPLER", "always_on")
	prefix := testservices.RedisPrefix(t)
	g := startGateway(t, fmt.Sprintf(`SITE {
	tracing
	mcp /mcp {
		connector kv redis %q
		tool note {
			description "Read a note"
			use kv
			statement "GET %snote:{{ inputs.key }}"
			input key string required
		}
		source pets openapi ../sources/openapi/testdata/petstore.yaml {
			base_url %s/v1
		}
	}
}`, testservices.RedisURL(t), prefix, up.URL))
	s := g.rawSession(t, "2025-06-18")
	s.call(t, "pets_showPetById", map[string]any{"petId": "secret-pet-42"}).tool(t)
	s.call(t, "note", map[string]any{"key": "secret-key-42"}).tool(t)

	spans := recv.waitSpans(t, 2)
	var httpSpan, redisSpan *span
	for i, sp := range spans {
		switch {
		case sp.name == "GET /pets/{petId}":
			httpSpan = &spans[i]
		case sp.name == "query kv":
			redisSpan = &spans[i]
		}
		for _, v := range sp.attrs {
			if strings.Contains(v, "secret-") {
				t.Errorf("span %s carries a value: %v", sp.name, sp.attrs)
			}
		}
	}
	host := strings.TrimPrefix(up.URL, "http://")
	if httpSpan == nil || httpSpan.kind != tracepb.Span_SPAN_KIND_CLIENT || httpSpan.attrs["http.request.method"] != "GET" ||
		httpSpan.attrs["url.template"] != "/pets/{petId}" || httpSpan.attrs["server.address"] != host || httpSpan.attrs["edgemcp.connector.name"] != "pets" {
		t.Errorf("HTTP span: %+v", httpSpan)
	}
	if redisSpan == nil || redisSpan.kind != tracepb.Span_SPAN_KIND_CLIENT || redisSpan.attrs["db.system.name"] != "redis" || redisSpan.attrs["db.query.text"] != "GET ?" {
		t.Errorf("Redis span: %+v", redisSpan)
	}
	for tool, system := range map[string]string{"pets_showPetById": "http", "note": "redis"} {
		if c := outboundCount(t, tool, system); c < 1 {
			t.Errorf("%s (%s): %d outbound observations", tool, system, c)
		}
	}
}

// outboundCount is how many outbound calls of tool on system were timed.
func outboundCount(t *testing.T, tool, system string) uint64 {
	t.Helper()
	h, err := telemetry.OutboundDuration.GetMetricWithLabelValues(tool, system)
	if err != nil {
		t.Fatal(err)
	}
	var m dto.Metric
	if err := h.(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}
