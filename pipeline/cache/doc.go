// Package cache is edgemcp's result cache (docs/architecture.md, Cache): an in-process first
// level (bigcache), an optional shared second level behind the Store
// interface (Redis lives in stores/redis, so this package imports
// no driver), single flight for concurrent misses, and stale-if-error.
//
// The cache wraps a tool's pipeline.Executor, so it applies to any kind of
// tool (DB statements, script handlers, proxied calls): the stages before
// execution (auth, input transform, validation) always run, and the output
// transform runs on every call, cached or not.
package cache
