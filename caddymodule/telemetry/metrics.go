package telemetry

import (
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Prometheus metrics in Caddy's registry, served by the admin /metrics.
//
// Caddy gives every config (every `caddy reload`) a fresh registry and
// provisions the modules again. The collectors here are created once per
// process and registered into each new registry, so counters keep counting
// across reloads instead of restarting at zero, and a second mcp handler in
// the same config finds them already registered (AlreadyRegisteredError is
// the expected case, not a failure). A call is observed once, whatever the
// number of registries that expose the collectors.

const metricsNamespace = "edgemcp"

// durationBuckets span a cache hit (sub-millisecond) to a slow statement.
var durationBuckets = prometheus.ExponentialBuckets(0.0001, 2.5, 14) // 100µs … ~15s

// The collectors the other parts of the gateway count in (the gate, the
// direct path, the limits, the connectors) are exported; the per-tool ones
// are reached through a Tool.
var (
	CallsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "tool_calls_total",
		Help: "tools/call requests by tool, outcome (ok or error) and JSON-RPC code (0 for success).",
	}, []string{"tool", "outcome", "code"})
	callDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: metricsNamespace, Name: "tool_call_duration_seconds",
		Help:    "Duration of tools/call from resolution to the encoded response, by tool.",
		Buckets: durationBuckets,
	}, []string{"tool"})
	stageDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: metricsNamespace, Name: "stage_duration_seconds",
		Help:    "Duration of each pipeline stage, by tool and stage.",
		Buckets: durationBuckets,
	}, []string{"tool", "stage"})
	CacheRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "cache_requests_total",
		Help: "Result cache lookups by tool and result (hit, miss, stale: served after a failure).",
	}, []string{"tool", "result"})
	GateRefusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "requests_refused_total",
		Help: "Requests refused with 403 before any other work, by reason (host: not a name of the endpoint; origin: a browser origin not allowed).",
	}, []string{"reason"})
	DirectCalls = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "direct_calls_total",
		Help: "tools/call requests answered by the direct path, without mcp-go's dispatcher.",
	})
	DirectLists = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "direct_lists_total",
		Help: "tools/list requests answered by the direct path from the tools' pre-encoded entries.",
	})
	OutboundDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: metricsNamespace, Name: "outbound_duration_seconds",
		Help:    "Duration of each outbound call of a tool (a statement, a Redis command, a source's HTTP request), by tool and system.",
		Buckets: durationBuckets,
	}, []string{"tool", "system"})
	PoolsOpened = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "connector_pools_opened_total",
		Help: "Connector pools opened, by connector type. A reload that keeps a connector's settings reuses its pool and does not count.",
	}, []string{"type"})
	RateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "rate_limited_total",
		Help: "Calls refused by a rate limit (scope endpoint, toolset or tool) or a concurrency limit (scope concurrency), by tool (\"\" for the endpoint and a toolset).",
	}, []string{"scope", "tool"})
	ToolsetRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "toolset_requests_total",
		Help: "Requests at a toolset's path that passed its gates (Host/Origin, auth, rate limit), by toolset.",
	}, []string{"toolset"})
	RateLimitFallbacks = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "rate_limit_fallbacks_total",
		Help: "Rate limit checks answered by the node's own counters because the shared Redis failed.",
	})
)

// Register adds edgemcp's collectors to a config's registry.
func Register(reg *prometheus.Registry) error {
	if reg == nil {
		return nil
	}
	for _, c := range []prometheus.Collector{CallsTotal, callDuration, stageDuration, CacheRequests, GateRefusals, DirectCalls, DirectLists, OutboundDuration, PoolsOpened, RateLimited, ToolsetRequests, RateLimitFallbacks, statsCollector{}, tasksCollector{}} {
		if err := reg.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if errors.As(err, &already) {
				continue
			}
			return err
		}
	}
	return nil
}

// toolMetrics holds a tool's series, resolved once so a successful call
// does not hash labels.
type toolMetrics struct {
	tool     string
	ok       prometheus.Counter
	duration prometheus.Observer
	stages   sync.Map // stage label → prometheus.Observer, made on first use
	outbound sync.Map // system → prometheus.Observer, made on first use
	caches   sync.Map // cache result → prometheus.Counter, made on first use
}

// series returns the series stored under key in m, made by mk on first use.
func series[T any](m *sync.Map, key string, mk func() T) T {
	if o, ok := m.Load(key); ok {
		return o.(T)
	}
	o, _ := m.LoadOrStore(key, mk())
	return o.(T)
}

func newToolMetrics(tool string) *toolMetrics {
	return &toolMetrics{
		tool:     tool,
		ok:       CallsTotal.WithLabelValues(tool, "ok", "0"),
		duration: callDuration.WithLabelValues(tool),
	}
}

// stage is the histogram of one stage. Series appear on first use, so a
// tool shows only the stages it has.
func (m *toolMetrics) stage(label string) prometheus.Observer {
	return series(&m.stages, label, func() prometheus.Observer { return stageDuration.WithLabelValues(m.tool, label) })
}

// outboundCalls is the histogram of the tool's outbound calls to system.
func (m *toolMetrics) outboundCalls(system string) prometheus.Observer {
	return series(&m.outbound, system, func() prometheus.Observer { return OutboundDuration.WithLabelValues(m.tool, system) })
}

// done counts a finished call.
func (m *toolMetrics) done(d time.Duration, perr *pipeline.Error, cache string) {
	m.duration.Observe(d.Seconds())
	if perr == nil {
		m.ok.Inc()
	} else {
		CallsTotal.WithLabelValues(m.tool, "error", strconv.Itoa(perr.Code)).Inc()
	}
	switch cache {
	case "hit", "miss", "stale":
		series(&m.caches, cache, func() prometheus.Counter { return CacheRequests.WithLabelValues(m.tool, cache) }).Inc()
	}
}
