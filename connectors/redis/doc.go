// Package redis is the Redis connector (go-redis v9, RESP3 when the
// server speaks it): one command per call, its reply mapped to JSON.
//
// A tool's statement is one command template (pipeline/cmdtemplate), split
// into arguments at load; inputs are substituted inside their own argument
// and sent as one RESP bulk string each, so no value can add an argument or
// a command.
//
// # Load-time checks (CheckCommand)
//
// Commands that change or take over the pooled connection (SELECT, AUTH,
// MULTI/EXEC, SUBSCRIBE, MONITOR, CLIENT ...) are refused on every
// connector. On a read_only connector only the vetted read-only commands of
// readOnlyCommands are allowed (those Redis 7 flags readonly, minus KEYS,
// blocking reads and script runners); the list needs no server at load.
// Redis has no read-only session: for a second guard at run time, connect
// as an ACL user limited to +@read.
//
// # Replies
//
//	bulk and simple strings       string
//	integers                      int64; beyond ±2^53 their decimal string
//	doubles (RESP3)               float64; inf and nan as strings
//	arrays, sets                  []any
//	maps (RESP3: HGETALL ...)     object
//	nil                           null
//	big numbers                   decimal string
//
// max_rows bounds the elements of arrays and maps at any depth;
// max_result_size the bytes of the reply as it is converted (each
// string's length plus pipeline.ValueOverhead per value). go-redis has
// read the whole reply by then: the bound is on what is converted,
// encoded, cached and sent, not on that first read.
//
// # Timeouts and retries
//
// statement_timeout (default 5s) bounds each socket read and write; the
// caller's deadline applies too. A read-write connector never retries a
// command after a network error (a write could run twice).
package redis
