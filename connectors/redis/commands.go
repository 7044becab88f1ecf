package redis

import (
	"sort"
	"strings"
)

// connectionCommands change the state of the connection they run on, or
// take it over; on a shared pool they would leak into the next caller's
// command (SELECT another database, a MULTI left open) or hang it. Refused
// on every connector, whatever read_only says.
var connectionCommands = map[string]string{
	"SELECT": "it switches the pooled connection's database (put the database in the URL)",
	"AUTH":   "it changes the pooled connection's user (put the user in the URL)",
	"HELLO":  "it changes the pooled connection's protocol", "RESET": "it resets the pooled connection",
	"QUIT": "it closes the pooled connection", "CLIENT": "it changes or inspects pooled connections",
	"MULTI": "a transaction spans several commands", "EXEC": "a transaction spans several commands",
	"DISCARD": "a transaction spans several commands", "WATCH": "a transaction spans several commands",
	"UNWATCH": "a transaction spans several commands", "SUBSCRIBE": "it takes over the connection",
	"PSUBSCRIBE": "it takes over the connection", "SSUBSCRIBE": "it takes over the connection",
	"UNSUBSCRIBE": "it takes over the connection", "PUNSUBSCRIBE": "it takes over the connection",
	"SUNSUBSCRIBE": "it takes over the connection", "MONITOR": "it takes over the connection",
	"SYNC": "it takes over the connection", "PSYNC": "it takes over the connection",
	"READONLY": "it changes the pooled connection's cluster mode", "READWRITE": "it changes the pooled connection's cluster mode",
	"SHUTDOWN": "it stops the server", "DEBUG": "it can crash or stall the server",
}

// readOnlyCommands are the commands Redis 7 flags "readonly" (COMMAND INFO)
// that also have no side effect on data or server and do not block: a
// vetted list, so that the check needs no server at load. Left out although
// flagged readonly: KEYS (blocks the server on a large keyspace; use SCAN),
// blocking reads (XREAD, XREADGROUP), PFCOUNT (may rewrite the key),
// TOUCH (updates access times), and SORT_RO/EVAL_RO/FCALL_RO (they run
// arbitrary read code the operator should review per tool: use a
// read-write connector with an ACL user instead).
var readOnlyCommands = setOf(
	// strings and keys
	"GET", "MGET", "STRLEN", "GETRANGE", "SUBSTR", "LCS", "EXISTS", "TYPE", "TTL", "PTTL",
	"EXPIRETIME", "PEXPIRETIME", "DBSIZE", "SCAN", "RANDOMKEY", "DUMP",
	// bits
	"GETBIT", "BITCOUNT", "BITPOS", "BITFIELD_RO",
	// hashes
	"HGET", "HMGET", "HGETALL", "HKEYS", "HVALS", "HLEN", "HEXISTS", "HSTRLEN", "HSCAN", "HRANDFIELD",
	// lists
	"LRANGE", "LINDEX", "LLEN", "LPOS",
	// sets
	"SMEMBERS", "SISMEMBER", "SMISMEMBER", "SCARD", "SRANDMEMBER", "SSCAN", "SINTER", "SUNION", "SDIFF", "SINTERCARD",
	// sorted sets
	"ZRANGE", "ZRANGEBYSCORE", "ZREVRANGEBYSCORE", "ZRANGEBYLEX", "ZREVRANGEBYLEX", "ZREVRANGE",
	"ZSCORE", "ZMSCORE", "ZRANK", "ZREVRANK", "ZCARD", "ZCOUNT", "ZLEXCOUNT", "ZSCAN", "ZRANDMEMBER",
	"ZINTER", "ZUNION", "ZDIFF", "ZINTERCARD",
	// streams
	"XRANGE", "XREVRANGE", "XLEN",
	// geo
	"GEODIST", "GEOHASH", "GEOPOS", "GEOSEARCH", "GEORADIUS_RO", "GEORADIUSBYMEMBER_RO",
	// server
	"PING", "ECHO", "TIME",
)

// readOnlySubcommands are container commands whose read-only
// subcommands are allowed on a read-only connector.
var readOnlySubcommands = map[string]map[string]bool{
	"OBJECT": setOf("ENCODING", "FREQ", "IDLETIME", "REFCOUNT"),
	"MEMORY": setOf("USAGE"),
	"XINFO":  setOf("STREAM", "GROUPS", "CONSUMERS"),
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func list(set map[string]bool) string {
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
