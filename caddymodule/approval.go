package caddymodule

import (
	"cmp"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/caddymodule/approval"
)

// provisionApprover makes the approver every tool under a policy shares,
// with the shared record of spent answers when the config asks for
// approvals and the nodes share a Redis.
func (h *Handler) provisionApprover(ctx caddy.Context, repl *caddy.Replacer) error {
	opts := approval.Options{Keys: h.sessionIDs.Keys(), Timeout: time.Duration(h.ApprovalTimeout), Audit: h.logger.Named("audit")}
	url, prefix := h.approvalRedis()
	if url != "" && h.asksApproval() {
		store, _, err := loadSharedStore(ctx, repl.ReplaceKnown(url, ""), approval.RedisTimeout)
		if err != nil {
			return fmt.Errorf("approvals: %v", err)
		}
		opts.Shared, opts.Prefix = store, repl.ReplaceKnown(prefix, "")
	}
	h.approver = approval.New(opts)
	return nil
}

// approvalRedis is the Redis the nodes share for approvals and its key
// prefix: rate_limit_redis first, since it holds what enforces limits (an
// operator runs it so that keys are not evicted early), else the cache's.
// A cache Redis with an eviction policy may drop a spent answer under
// memory pressure (README, Approvals).
func (h *Handler) approvalRedis() (url, prefix string) {
	switch {
	case h.RateLimitStore != nil:
		return h.RateLimitStore.Redis, cmp.Or(h.RateLimitStore.Prefix, "edgemcp:")
	case h.Cache != nil && h.Cache.Redis != "":
		return h.Cache.Redis, cmp.Or(h.Cache.KeyPrefix, "edgemcp:")
	}
	return "", ""
}

// asksApproval reports whether any policy of the config may ask: only
// then is a Redis client taken for the record.
func (h *Handler) asksApproval() bool {
	for _, c := range h.Connectors {
		if c.Approval != "" {
			return true
		}
	}
	for _, t := range h.Tools {
		if t.Approval == approvalRequired {
			return true
		}
	}
	for _, s := range h.Sources {
		if s.Approval != "" {
			return true
		}
	}
	return false
}
