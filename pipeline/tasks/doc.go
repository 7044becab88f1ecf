// Package tasks runs calls as MCP tasks (docs/tasks.md): a task is made at
// once, its call runs in the background under a context that a cancel or
// the task's ttl ends, and its outcome is kept until the ttl for the
// client to poll.
//
// Tasks live in a KV: in this process's memory (Memory), or in a store
// every gateway node shares (Redis), so that any node answers for any
// task. The node that runs a task holds a lease on it, renewed while the
// call runs; a task whose lease lapsed without an outcome is reported
// failed, never left working. A cancel is written to the KV as the task's
// outcome, which the running node sees at its next renewal.
//
// The package is Caddy-free, imports no driver, and speaks both protocol
// versions' wire shapes (Legacy, Detailed); the transport decides when a call
// becomes a task.
package tasks
