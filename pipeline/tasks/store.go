package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// How a task is kept in the KV: three keys, each written whole, none
// ever changed in place, so that plain Get, Set and SetIfAbsent suffice
// across nodes.
//   - <prefix><id>/r, the record: who owns the task, its tool, when it was
//     made, its ttl and poll interval. Written once, at creation.
//   - <prefix><id>/l, the lease: set by the running node and renewed
//     while the call runs, each time for leaseRenewals renewal periods.
//   - <prefix><id>/e, the outcome: completed with the result, failed with
//     the error, or cancelled. Written with SetIfAbsent, so the first of
//     the call's end, a cancel and a lapsed lease to write it is the
//     task's outcome and the others change nothing.
//
// A task without an outcome is working while its lease is held; once the
// lease lapsed, whoever reads it first writes it failed. Every key expires
// with the task's ttl, counted from its creation.

// record is the task as made.
type record struct {
	Owner    string        `json:"owner"`
	Provider string        `json:"provider,omitempty"`
	Tool     string        `json:"tool"`
	Created  time.Time     `json:"created"`
	TTL      time.Duration `json:"ttl"`
	Poll     time.Duration `json:"poll"`
}

// expires is when the task and its keys are gone.
func (r *record) expires() time.Time { return r.Created.Add(r.TTL) }

// outcome is how the task ended.
type outcome struct {
	Status  pipeline.TaskStatus `json:"status"`
	Message string              `json:"message,omitempty"`
	At      time.Time           `json:"at"`
	Result  json.RawMessage     `json:"result,omitempty"`
	Error   *pipeline.TaskError `json:"error,omitempty"`
}

// Messages of the outcomes the gateway writes itself.
const (
	msgCancelled = "cancelled by the client"
	msgLapsed    = "the gateway node running it stopped"
	msgStopped   = "the gateway node running it shut down"
	msgLost      = "the gateway node running it lost the task store"
)

// counts are a node's task metrics: an outcome counts on the node that
// wrote it, so that the nodes' sums count each task once; expired counts
// the calls this node stopped at their task's ttl.
type counts struct {
	created, completed, failed, cancelled, expired atomic.Int64
}

// store is the tasks' keys in a KV.
type store struct {
	kv     KV
	prefix string
	now    func() time.Time
	counts counts
}

func (s *store) key(id, kind string) string { return s.prefix + id + "/" + kind }

// create keeps a new task, its lease first: a record without a lease
// would read as a task whose node stopped.
func (s *store) create(ctx context.Context, id string, rec *record, lease time.Duration, node string) error {
	life := rec.expires().Sub(s.now())
	if err := s.kv.Set(ctx, s.key(id, "l"), []byte(node), min(lease, life)); err != nil {
		return err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := s.kv.Set(ctx, s.key(id, "r"), b, life); err != nil {
		return err
	}
	s.counts.created.Add(1)
	return nil
}

// load reads the task id for the caller who verifies: ErrNotFound when
// it does not exist, expired or is another caller's. A task whose lease
// lapsed without an outcome is written failed first.
func (s *store) load(ctx context.Context, id string, who Who) (*pipeline.Task, error) {
	rec, err := s.record(ctx, id)
	if err != nil {
		return nil, err
	}
	if !owns(who, rec.Provider, rec.Owner) {
		return nil, ErrNotFound
	}
	end, err := s.outcome(ctx, id)
	if err != nil {
		return nil, err
	}
	if end == nil {
		held, err := s.kv.Get(ctx, s.key(id, "l"))
		if err != nil {
			return nil, err
		}
		if held != nil {
			return taskOf(id, rec, nil), nil
		}
		lapsed := &outcome{Status: pipeline.TaskFailed, Message: msgLapsed, At: s.now(),
			Error: &pipeline.TaskError{Code: pipeline.CodeStageFailed, Message: string(pipeline.StageExecution) + ": " + msgLapsed}}
		// Whoever wrote first, that outcome stands; when none could be
		// written (the store is full or failing), the answer is still
		// that the task failed.
		if _, err := s.finish(ctx, id, rec, lapsed); err == nil {
			end, _ = s.outcome(ctx, id)
		}
		if end == nil {
			end = lapsed
		}
	}
	return taskOf(id, rec, end), nil
}

// record reads a task's record; ErrNotFound when there is none (or it is
// not one the gateway wrote).
func (s *store) record(ctx context.Context, id string) (*record, error) {
	if id == "" || IsSealed(id) {
		return nil, ErrNotFound
	}
	b, err := s.kv.Get(ctx, s.key(id, "r"))
	if err != nil {
		return nil, err
	}
	var rec record
	if b == nil || json.Unmarshal(b, &rec) != nil {
		return nil, ErrNotFound
	}
	return &rec, nil
}

// outcome reads a task's outcome; nil while it has none.
func (s *store) outcome(ctx context.Context, id string) (*outcome, error) {
	b, err := s.kv.Get(ctx, s.key(id, "e"))
	if err != nil || b == nil {
		return nil, err
	}
	var end outcome
	if err := json.Unmarshal(b, &end); err != nil {
		return nil, errors.New("a task's outcome in the store is not readable")
	}
	return &end, nil
}

// finish writes the task's outcome unless it has one, and reports
// whether this was the one written; the writer counts it.
func (s *store) finish(ctx context.Context, id string, rec *record, end *outcome) (bool, error) {
	life := rec.expires().Sub(s.now())
	if life <= 0 {
		return false, nil // gone with its ttl
	}
	b, err := json.Marshal(end)
	if err != nil {
		return false, err
	}
	won, err := s.kv.SetIfAbsent(ctx, s.key(id, "e"), b, life)
	if !won || err != nil {
		return false, err
	}
	switch {
	case end.Status == pipeline.TaskCompleted:
		s.counts.completed.Add(1)
	case end.Status == pipeline.TaskCancelled:
		s.counts.cancelled.Add(1)
	default:
		s.counts.failed.Add(1)
	}
	return true, nil
}

// renew extends the running node's lease on a task, and reports whether
// the task has an outcome already (cancelled, or given up by another
// node), when the node is to stop its call.
func (s *store) renew(ctx context.Context, id string, rec *record, lease time.Duration, node string) (ended bool, err error) {
	end, err := s.kv.Get(ctx, s.key(id, "e"))
	if err != nil || end != nil {
		return end != nil, err
	}
	life := rec.expires().Sub(s.now())
	if life <= 0 {
		return true, nil
	}
	return false, s.kv.Set(ctx, s.key(id, "l"), []byte(node), min(lease, life))
}

// taskOf is the task as a client sees it.
func taskOf(id string, rec *record, end *outcome) *pipeline.Task {
	t := &pipeline.Task{ID: id, Status: pipeline.TaskWorking, Created: rec.Created, Updated: rec.Created,
		TTL: rec.TTL, PollInterval: rec.Poll}
	if end != nil {
		t.Status, t.Message, t.Updated, t.Result, t.Error = end.Status, end.Message, end.At, end.Result, end.Error
	}
	return t
}
