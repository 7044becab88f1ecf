package caddymodule

import (
	"context"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/caddymodule/access"
	"github.com/edgemcp/edgemcp/caddymodule/approval"
	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
	"github.com/edgemcp/edgemcp/caddymodule/sourcetools"
	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/tasks"
)

// Tasks (docs/tasks.md): a tool, or a connector's or source's tools by
// default, may run as the gateway's tasks,
//
//	task optional|required [ttl <duration>]
//
// kept in the Redis the cache or the rate limits use, when there is one,
// else in this node's memory, bounded. The protocol is the fast path's
// (fastpath.Server.AnswerTask); here are the settings and the runner.

// TaskConfig is `task optional|required [ttl <duration>]`.
type TaskConfig struct {
	// Mode is "optional" (a task when the client asks for one) or
	// "required" (only ever a task).
	Mode string `json:"mode"`
	// TTL is how long a task and its outcome are kept, counted from its
	// creation; it also bounds the call (default 1h).
	TTL caddy.Duration `json:"ttl,omitempty"`
}

const (
	taskOptional = "optional"
	taskRequired = "required"

	defaultTaskTTL = time.Hour
	minTaskTTL     = time.Second
	maxTaskTTL     = 7 * 24 * time.Hour

	// A node's memory store without Redis: each task is up to three
	// entries (record, lease, outcome), so about 10,000 tasks, and their
	// results within 256 MiB.
	taskMemoryEntries = 30000
	taskMemoryBytes   = 256 << 20
)

// apply makes t run as a task as c says; an error names t.
func (c *TaskConfig) apply(t *pipeline.Tool) error {
	switch c.Mode {
	case taskOptional:
		t.Tasks = pipeline.TaskOptional
	case taskRequired:
		t.Tasks = pipeline.TaskRequired
	default:
		return fmt.Errorf("tool %q: task must be %q or %q, got %q", t.Name, taskOptional, taskRequired, c.Mode)
	}
	ttl := time.Duration(c.TTL)
	if ttl == 0 {
		ttl = defaultTaskTTL
	}
	if ttl < minTaskTTL || ttl > maxTaskTTL {
		return fmt.Errorf("tool %q: task ttl must be from %s to %s, got %s", t.Name, minTaskTTL, maxTaskTTL, ttl)
	}
	t.TaskTTL = ttl
	return nil
}

// withTask applies own (a tool's task line) or else def (its connector's
// or source's) to t. A tool that asks for approval runs as a task once
// approved, on 2026-07-28 (the fast path's prepare); before that version
// it is answered as one that does not (docs/tasks.md).
func withTask(t *pipeline.Tool, own, def *TaskConfig) error {
	c := own
	if c == nil {
		c = def
	}
	if c == nil || t.TaskPassthrough {
		return nil
	}
	return c.apply(t)
}

// provisionTasks gives the declared tools their task settings and, when
// any tool, connector or source has one, makes the runner.
func (h *Handler) provisionTasks(p *provisioning) error {
	conns := make(map[string]*TaskConfig, len(h.Connectors))
	wanted := false
	for _, c := range h.Connectors {
		conns[c.Name] = c.Task
		wanted = wanted || c.Task != nil
	}
	for i, tc := range h.Tools {
		if err := withTask(p.tools[i], tc.Task, conns[tc.Use]); err != nil {
			return err
		}
		wanted = wanted || tc.Task != nil
	}
	for _, s := range h.Sources {
		wanted = wanted || s.Task != nil
	}
	for _, s := range h.sources {
		_, forwards := s.Src.(pipeline.TaskForwarder)
		wanted = wanted || forwards
	}
	if !wanted {
		return nil
	}
	return h.openTaskRunner(p.ctx, p.repl)
}

// sourceTask is the task default of the source named name.
func (h *Handler) sourceTask(s *sourcetools.Source) *TaskConfig {
	for i := range h.Sources {
		if h.Sources[i].Name == s.Name {
			return h.Sources[i].Task
		}
	}
	return nil
}

// taskRunners keeps a runner across reloads while its store is the same:
// a reload neither stops the calls running as tasks nor, without Redis,
// forgets the tasks this node keeps.
var taskRunners = caddy.NewUsagePool()

type sharedRunner struct{ *tasks.Runner }

func (s sharedRunner) Destruct() error {
	s.Close()
	telemetry.RetireTasks(s.Runner)
	return nil
}

// openTaskRunner takes (or makes) the runner over the store tasks live
// in: the cache's Redis, else the rate limits', else this node's memory.
func (h *Handler) openTaskRunner(ctx caddy.Context, repl *caddy.Replacer) error {
	url, timeout, prefix := "", time.Second, ""
	switch {
	case h.Cache != nil && h.Cache.Redis != "":
		url = repl.ReplaceKnown(h.Cache.Redis, "")
		if h.Cache.RedisTimeout > 0 {
			timeout = time.Duration(h.Cache.RedisTimeout)
		}
		// Endpoints that keep their cache entries apart keep their
		// tasks apart too.
		if kp := repl.ReplaceKnown(h.Cache.KeyPrefix, ""); kp != "" {
			prefix = kp + "tasks:"
		}
	case h.RateLimitStore != nil && h.RateLimitStore.Redis != "":
		url = repl.ReplaceKnown(h.RateLimitStore.Redis, "")
	}
	var kv tasks.KV = nil
	poolKey := "memory"
	if url != "" {
		store, key, err := loadSharedStore(ctx, url, timeout)
		if err != nil {
			return fmt.Errorf("tasks: %v", err)
		}
		shared, ok := store.(tasks.KV)
		if !ok {
			return fmt.Errorf("tasks: the shared store (%T) cannot keep tasks: it has no SetIfAbsent", store)
		}
		kv, poolKey = shared, "redis\x00"+key+"\x00"+prefix
	}
	val, _, err := taskRunners.LoadOrNew(poolKey, func() (caddy.Destructor, error) {
		if kv == nil {
			kv = tasks.NewMemory(taskMemoryEntries, taskMemoryBytes)
		}
		r := tasks.New(kv, tasks.Config{Prefix: prefix})
		telemetry.ExposeTasks(r)
		return sharedRunner{r}, nil
	})
	if err != nil {
		return err
	}
	h.taskRunner, h.taskPoolKey = val.(sharedRunner).Runner, poolKey
	return nil
}

// cleanupTasks releases this config's share of the runner.
func (h *Handler) cleanupTasks() {
	if h.taskPoolKey != "" {
		_, _ = taskRunners.Delete(h.taskPoolKey)
		h.taskPoolKey = ""
	}
}

// taskOptions are the fast path's tasks; nil when no tool runs as one.
func (h *Handler) taskOptions() *fastpath.TaskOptions {
	if h.taskRunner == nil {
		return nil
	}
	return &fastpath.TaskOptions{Runner: h.taskRunner, Caller: h.taskCaller, Identity: access.Identity,
		SealKey: h.sessionIDs.Keys()[0], Upstream: h.taskUpstream, Listing: h.taskListing, Answers: approval.WithAnswers}
}

// taskListing are the names of the sources that now list a caller's own
// upstream tasks (a session per caller whose server lists tasks), in
// their declared order.
func (h *Handler) taskListing() []string {
	var names []string
	for _, s := range h.sources {
		if fwd, ok := s.Src.(pipeline.TaskForwarder); ok && fwd.TaskCapability().List {
			names = append(names, s.Name)
		}
	}
	return names
}

// taskUpstream is the source named name when it forwards tasks, and ctx
// with the caller whose upstream session it uses (requestAccess.Caller).
func (h *Handler) taskUpstream(ctx context.Context, name string) (context.Context, pipeline.TaskForwarder) {
	for _, s := range h.sources {
		if s.Name == name {
			if fwd, ok := s.Src.(pipeline.TaskForwarder); ok {
				return requestAccess{h}.Caller(ctx), fwd
			}
		}
	}
	return ctx, nil
}

// runsTasks reports whether some tool of the tool set now runs as a task:
// the tasks capability is declared only then (fastpath.TaskHooks).
func (h *Handler) runsTasks() bool {
	for _, t := range h.tools().engine.Tools() {
		if t.Tasks != pipeline.TaskForbidden {
			return true
		}
	}
	return false
}

// taskCaller verifies the caller of a request about a task with the auth
// provider that verified the task's creator (tasks.Who): a caller it does
// not verify is not the task's owner.
func (h *Handler) taskCaller(ctx context.Context, info *pipeline.RequestInfo) tasks.Who {
	return func(provider string) (*pipeline.Identity, bool) {
		p, ok := h.providers[provider]
		if !ok {
			return nil, false
		}
		id, err := (&pipeline.AuthCheck{ProviderName: provider, Provider: p}).Identify(ctx, info, "")
		return id, err == nil && id != nil
	}
}
