// Package sqlite is the SQLite connector, on modernc.org/sqlite (pure Go,
// no cgo) through database/sql. Rows come back normalized to JSON-ready
// values (pipeline.Rows).
//
// # Normalization
//
// SQLite values carry a storage class, columns only a declared type; both
// are used:
//
//	NULL                              nil
//	INTEGER                           int64; bool when the column is declared
//	                                  BOOLEAN or BOOL; the decimal string beyond
//	                                  ±2^53, as for PostgreSQL's int8 (a JSON
//	                                  number that large loses digits in most
//	                                  clients)
//	REAL                              float64 (±Inf as "Infinity"/"-Infinity")
//	TEXT                              string
//	BLOB                              base64 string (standard, padded)
//	declared DATE, DATETIME,
//	TIMESTAMP holding a time          RFC 3339 in UTC, "2024-05-01T12:00:00Z";
//	                                  a DATE at midnight as "2024-05-01".
//	                                  SQLite's own date functions treat a time
//	                                  without offset as UTC; so do we. Text that
//	                                  is not a time, and integers, stay as is.
//	declared JSON holding valid JSON  json.RawMessage (the text verbatim)
//
// # Arguments
//
// time.Time is bound as RFC 3339 text in UTC, bool as 1/0, and slices and
// maps as JSON text, so that json_each(?) and json_extract(?, '$.k') work.
//
// # Read-only
//
// With Config.ReadOnly the database is opened with mode=ro and every
// connection runs PRAGMA query_only=1: SQLite refuses any write.
//
// # Seeding
//
// Config.Seed names a .sql script that builds the database when its file
// does not exist yet (the demo database on a fresh machine). The script
// runs once, on a temporary file that is moved into place only when it
// succeeded, so a failed or concurrent seed never leaves a half-built
// database behind.
package sqlite
