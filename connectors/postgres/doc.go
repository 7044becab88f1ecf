// Package postgres is the PostgreSQL connector: a pgx v5 pool that runs one
// bound statement per call and returns rows already normalized to
// JSON-ready values (pipeline.Rows), so that nothing downstream ever sees a
// driver type.
//
// # Normalization (by result column type OID)
//
//	bool                         bool
//	int2, int4, oid              int64
//	int8                         int64 when |v| <= 2^53, else its decimal string
//	float4, float8               float64; NaN, Infinity, -Infinity as strings
//	                             (float4 goes through its shortest decimal form,
//	                             so 0.1::float4 is 0.1, not 0.10000000149011612)
//	numeric                      json.Number when the decimal survives a round trip
//	                             through float64, else its exact decimal string;
//	                             NaN and ±Infinity as strings
//	text, varchar, bpchar, name,
//	citext, enums, unknown       string
//	uuid                         string (canonical 8-4-4-4-12, lower case)
//	bytea                        base64 string (standard encoding, padded)
//	json, jsonb                  json.RawMessage (the document verbatim)
//	timestamptz                  RFC 3339 in UTC: 2024-05-01T12:00:00.123456Z
//	timestamp                    RFC 3339 without offset: 2024-05-01T12:00:00.123456
//	                             (a wall-clock value has no zone; we do not invent one)
//	date                         "YYYY-MM-DD"
//	time, timetz, interval       PostgreSQL's text form (08:30:00, 1 day 02:00:00)
//	infinity (dates, timestamps) "infinity" / "-infinity"
//	inet, cidr, macaddr(8)       string as PostgreSQL prints it
//	arrays of any of these       []any normalized element-wise; multi-dimensional
//	                             arrays nest; lower bounds are dropped
//	NULL                         nil
//	anything else                PostgreSQL's own text form of the value
//
// Years outside 1..9999 have no RFC 3339 form; they are formatted by Go's
// time package (years above 9999 get more digits, BC years a sign).
//
// # Read-only
//
// With Config.ReadOnly, every statement is sent as one pipelined batch
// BEGIN READ ONLY; <statement>; COMMIT, so PostgreSQL itself refuses any
// write (SQLSTATE 25006), including writes hidden in CTEs or functions, at
// the cost of no extra round trip. A failed statement leaves the connection
// in an aborted transaction; it is rolled back before the connection goes
// back to the pool.
//
// # Errors
//
// Every error returned by Query is a *pipeline.PublicError whose Public text
// never contains the connection string, host, user or password.
package postgres
