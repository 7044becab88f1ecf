package telemetry

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/script"
)

// Pool and cache gauges are read when /metrics is scraped, from the live
// objects the provisioned handlers expose: connector pools
// (ExposeConnectorPool, for a connector that implements
// pipeline.PoolStatser), script runtime pools (ExposeScriptPool), result
// caches (ExposeCache) and pinned sources' held tools (ExposeHeld), each
// called from Provision with the handler as its owner.
//
// An owner's exposures end with Unexpose, from its Cleanup. During a
// reload the old and the new config are both provisioned for a moment,
// often sharing the same pool (caddy.UsagePool): a series is reported
// once, from the most recent exposure of its name.

type statKind int

const (
	kindConnector statKind = iota
	kindScriptPool
	kindCache
	kindHeld
)

type exposure struct {
	owner any // the provisioned handler, compared by identity
	kind  statKind
	name  string
	typ   string // connector type
	pool  pipeline.PoolStatser
	cache pipeline.CacheStatser
	held  func() map[string]int // reason → tools held (kindHeld)
}

var exposed struct {
	sync.Mutex
	list []exposure
}

func expose(e exposure) {
	exposed.Lock()
	exposed.list = append(exposed.list, e)
	exposed.Unlock()
}

// ExposeConnectorPool reports a connector's pool as
// edgemcp_connector_pool_*.
func ExposeConnectorPool(owner any, name, typ string, p pipeline.PoolStatser) {
	expose(exposure{owner: owner, kind: kindConnector, name: name, typ: typ, pool: p})
}

// ExposeScriptPool reports a script runtime pool as edgemcp_script_pool_*.
func ExposeScriptPool(owner any, name string, p pipeline.PoolStatser) {
	expose(exposure{owner: owner, kind: kindScriptPool, name: name, pool: p})
}

// ExposeCache reports a result cache as edgemcp_cache_entries and
// edgemcp_cache_evictions_total.
func ExposeCache(owner any, name string, c pipeline.CacheStatser) {
	expose(exposure{owner: owner, kind: kindCache, name: name, cache: c})
}

// ExposeHeld reports a pinned source's held tools as
// edgemcp_tools_held{source,reason}: held gives the number held now by
// reason (changed, new, unreadable); changed and new are always reported,
// zero when none.
func ExposeHeld(owner any, source string, held func() map[string]int) {
	expose(exposure{owner: owner, kind: kindHeld, name: source, held: held})
}

// Unexpose ends every exposure of owner (its Cleanup).
func Unexpose(owner any) {
	exposed.Lock()
	defer exposed.Unlock()
	kept := exposed.list[:0]
	for _, e := range exposed.list {
		if e.owner != owner {
			kept = append(kept, e)
		}
	}
	clear(exposed.list[len(kept):])
	exposed.list = kept
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(metricsNamespace, "", name), help, labels, nil)
}

var (
	poolMaxDesc      = desc("connector_pool_max_connections", "Configured maximum size of a connector's pool (0: unbounded).", "connector", "type")
	poolOpenDesc     = desc("connector_pool_open_connections", "Connections open in a connector's pool.", "connector", "type")
	poolInUseDesc    = desc("connector_pool_in_use_connections", "Connections of a connector's pool running a statement.", "connector", "type")
	poolIdleDesc     = desc("connector_pool_idle_connections", "Idle connections in a connector's pool.", "connector", "type")
	poolWaitsDesc    = desc("connector_pool_waits_total", "Acquisitions that waited for a free connection.", "connector", "type")
	poolWaitSecDesc  = desc("connector_pool_wait_seconds_total", "Total time acquisitions waited for a free connection.", "connector", "type")
	scriptMaxDesc    = desc("script_pool_max_runtimes", "Configured maximum of JavaScript runtimes in a pool (0: unbounded).", "pool")
	scriptInUseDesc  = desc("script_pool_in_use_runtimes", "JavaScript runtimes running a script now.", "pool")
	scriptWaitsDesc  = desc("script_pool_waits_total", "Script runs that waited for a free runtime.", "pool")
	scriptAbanDesc   = desc("script_abandoned_runtimes", "JavaScript runtimes still running a native operation after their call returned at its limit.", "pool")
	scriptAbanTotal  = desc("script_abandoned_total", "Script calls that returned at their limit leaving their runtime running (abandoned, never reused).", "pool")
	cacheEntriesDesc = desc("cache_entries", "Entries in a result cache.", "cache")
	cacheEvictDesc   = desc("cache_evictions_total", "Entries a result cache dropped for space or expiry.", "cache")
	toolsHeldDesc    = desc("tools_held", "Tools of a pinned source held back (not listed, not callable), by reason: changed (the definition is not the pinned one), new (no pin), unreadable.", "source", "reason")
)

// statsCollector reads the exposed pools and caches at scrape time.
type statsCollector struct{}

func (statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolMaxDesc, poolOpenDesc, poolInUseDesc, poolIdleDesc, poolWaitsDesc,
		poolWaitSecDesc, scriptMaxDesc, scriptInUseDesc, scriptWaitsDesc, scriptAbanDesc, scriptAbanTotal, cacheEntriesDesc, cacheEvictDesc, toolsHeldDesc} {
		ch <- d
	}
}

func (statsCollector) Collect(ch chan<- prometheus.Metric) {
	exposed.Lock()
	list := append([]exposure(nil), exposed.list...)
	exposed.Unlock()

	type key struct {
		kind statKind
		name string
	}
	seen := make(map[key]bool, len(list))
	for i := len(list) - 1; i >= 0; i-- { // the newest exposure of a name wins
		e := list[i]
		if seen[key{e.kind, e.name}] {
			continue
		}
		seen[key{e.kind, e.name}] = true
		switch e.kind {
		case kindConnector:
			s := e.pool.PoolStats()
			gauge := func(d *prometheus.Desc, v float64) {
				ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, e.name, e.typ)
			}
			gauge(poolMaxDesc, float64(s.Max))
			gauge(poolOpenDesc, float64(s.Open))
			gauge(poolInUseDesc, float64(s.InUse))
			gauge(poolIdleDesc, float64(s.Idle))
			ch <- prometheus.MustNewConstMetric(poolWaitsDesc, prometheus.CounterValue, float64(s.Waits), e.name, e.typ)
			ch <- prometheus.MustNewConstMetric(poolWaitSecDesc, prometheus.CounterValue, s.WaitTime.Seconds(), e.name, e.typ)
		case kindScriptPool:
			s := e.pool.PoolStats()
			ch <- prometheus.MustNewConstMetric(scriptMaxDesc, prometheus.GaugeValue, float64(s.Max), e.name)
			ch <- prometheus.MustNewConstMetric(scriptInUseDesc, prometheus.GaugeValue, float64(s.InUse), e.name)
			ch <- prometheus.MustNewConstMetric(scriptWaitsDesc, prometheus.CounterValue, float64(s.Waits), e.name)
			if a, ok := e.pool.(interface{ AbandonStats() script.AbandonStats }); ok {
				st := a.AbandonStats()
				ch <- prometheus.MustNewConstMetric(scriptAbanDesc, prometheus.GaugeValue, float64(st.Running), e.name)
				ch <- prometheus.MustNewConstMetric(scriptAbanTotal, prometheus.CounterValue, float64(st.Total), e.name)
			}
		case kindCache:
			s := e.cache.CacheStats()
			ch <- prometheus.MustNewConstMetric(cacheEntriesDesc, prometheus.GaugeValue, float64(s.Entries), e.name)
			ch <- prometheus.MustNewConstMetric(cacheEvictDesc, prometheus.CounterValue, float64(s.Evictions), e.name)
		case kindHeld:
			held := e.held()
			for _, reason := range []string{"changed", "new", "unreadable"} {
				if n, ok := held[reason]; ok || reason != "unreadable" {
					ch <- prometheus.MustNewConstMetric(toolsHeldDesc, prometheus.GaugeValue, float64(n), e.name, reason)
				}
			}
		}
	}
}
