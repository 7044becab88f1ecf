package approval

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// One approval, one call (README, Approvals; docs/security.md,
// "Approvals"). On 2026-07-28 the answer comes back with the signed
// requestState of its question; the signature proves the question was
// asked, not that it was not answered before. So each state carries a
// random nonce, and the approver spends it before the call runs: a state
// already spent is refused, whatever its answer, on every node that
// shares the record. The record is the Redis the nodes already share
// (rate_limit_redis, else the cache's redis), or without one this
// process's memory. (On the versions with sessions the answer is the
// reply to one elicitation/create, which mcp-go delivers once.)

const (
	// approvalClockSkew is how far the clocks of two nodes may differ: a
	// spent nonce is remembered for approval_timeout and this much more,
	// while a node with a slower clock could still take its state as fresh.
	approvalClockSkew = time.Minute
	// RedisTimeout bounds the one Redis command of an approved call: a
	// person has just answered, a second more is nothing, and a spend that
	// fails refuses the call.
	RedisTimeout = time.Second
	// maxSpentHere bounds the node-local record.
	maxSpentHere = 100000
)

// spentApprovals records the approval states already answered.
type spentApprovals interface {
	// spend records nonce for ttl and reports whether it was not recorded
	// before. An error means it could not be recorded: the call must not
	// run.
	spend(ctx context.Context, nonce string, ttl time.Duration) (first bool, err error)
}

// sharedSpent is the record in Redis: one SET NX per answer.
type sharedSpent struct {
	store  pipeline.SharedStore
	prefix string
}

func (s sharedSpent) spend(ctx context.Context, nonce string, ttl time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, RedisTimeout)
	defer cancel()
	return s.store.Claim(ctx, s.prefix+"approval:"+nonce, ttl)
}

// spentHere is the node-local record, kept across reloads (a reload must
// not make an answer new again).
var spentHere = &localSpent{max: maxSpentHere, until: make(map[string]time.Time)}

// localSpent remembers nonces until they expire, at most max of them:
// when every slot holds an unexpired nonce, a new answer is refused
// rather than an old one forgotten.
type localSpent struct {
	mu    sync.Mutex
	max   int
	until map[string]time.Time
	now   func() time.Time // nil: time.Now
}

var errTooManyApprovals = errors.New("too many approvals answered within approval_timeout on this node")

func (l *localSpent) spend(_ context.Context, nonce string, ttl time.Duration) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if l.now != nil {
		now = l.now()
	}
	if until, ok := l.until[nonce]; ok && now.Before(until) {
		return false, nil
	}
	if len(l.until) >= l.max {
		for n, until := range l.until {
			if !now.Before(until) {
				delete(l.until, n)
			}
		}
		if len(l.until) >= l.max {
			return false, errTooManyApprovals
		}
	}
	l.until[nonce] = now.Add(ttl)
	return true, nil
}
