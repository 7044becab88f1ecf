// Package guardrail holds each call against what ran before it in the
// same conversation (docs/sql-agent.md, Guardrails):
//
//   - requires <tool> [within <n> calls | <duration>]: a tool runs only
//     if <tool> has succeeded earlier in the conversation (describe_table
//     before query, interpret before query), recently enough;
//   - after <tool> deny <tool...>: once <tool> has succeeded in the
//     conversation, the denied tools are refused in it for good (no
//     outbound send after a PII read).
//
// A conversation is an MCP session; on protocol 2026-07-28, which has no
// sessions, it is the verified caller together with the conversation id
// the client sends in the call's _meta, and a guarded tool is refused,
// saying why, when the call has neither. The record lives in a Store
// (Memory in one process; a shared one, such as Redis, across gateway
// nodes) and expires a while after the conversation's last recorded
// call. Guardrail implements pipeline.Sequencer: the engine runs it on
// every path to a tool.
package guardrail
