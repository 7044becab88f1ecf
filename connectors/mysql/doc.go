// Package mysql is the MySQL and MariaDB connector (go-sql-driver/mysql):
// a database/sql pool that runs one bound statement per call and returns
// rows normalized to JSON-ready values (pipeline.Rows).
//
// # Binding
//
// Values are always bound by the server (prepared statements, ? markers
// from pipeline/sqltemplate's MySQL dialect): interpolateParams=true,
// multiStatements=true and allowAllFiles=true are refused in the DSN, and a
// session whose sql_mode has NO_BACKSLASH_ESCAPES or ANSI_QUOTES is refused,
// because the template compiler lexes strings as MySQL's default mode does.
// Prepared statements are cached per connection (at most 64), so a call
// with arguments costs one round trip, not prepare + execute.
//
// # Sessions
//
// Each new connection learns the server flavour and its connection id, and
// sets time_zone '+00:00', the statement timeout (max_statement_time in
// seconds on MariaDB, where it covers every statement; max_execution_time
// in milliseconds on MySQL, where it covers SELECT) and, for read_only,
// the session's default access mode.
//
// # Read-only
//
// With Config.ReadOnly, every statement runs in START TRANSACTION READ ONLY
// ... COMMIT, so the server refuses any write (error 1792) wherever it
// hides; that is three round trips, which go-sql-driver cannot pipeline.
//
// # Cancellation and timeouts
//
// When the caller's context ends (the MCP client went away) or the
// statement outlives StatementTimeout plus a short grace (MySQL's
// max_execution_time does not cover writes), the driver drops the socket
// and the connector sends KILL QUERY for the connection on a separate
// one-connection pool, so the server stops the statement instead of
// running it to its end. The killed connection is discarded, never reused.
// A result that exceeds max_rows is abandoned the same way instead of being
// read to its end to drain the connection (a statement that forgot its
// LIMIT would otherwise stream the whole table to the gateway).
//
// # Normalization (by the column type the server reports)
//
//	TINYINT ... BIGINT, YEAR      int64; beyond ±2^53 its decimal string
//	UNSIGNED integers             the same; BIGINT UNSIGNED beyond 2^53 as a string
//	FLOAT                         float64 through its shortest decimal (0.1 is 0.1)
//	DOUBLE                        float64
//	DECIMAL                       json.Number as the server wrote it (scale kept)
//	                              when a double reads it exactly, else the exact
//	                              decimal string
//	DATETIME                      RFC 3339 without offset: 2024-05-01T12:00:00.123456
//	TIMESTAMP                     RFC 3339 in UTC: 2024-05-01T12:00:00.500Z
//	DATE                          "YYYY-MM-DD"; zero dates stay as the server writes them
//	TIME                          the server's text (-838:59:59)
//	JSON                          json.RawMessage (MySQL; MariaDB's JSON is LONGTEXT on
//	                              the wire and comes back as a string)
//	BLOB, BINARY, VARBINARY,
//	GEOMETRY                      base64 string
//	BIT(n)                        its unsigned value (a string beyond 2^53)
//	CHAR, VARCHAR, TEXT, ENUM, SET string
//	NULL                          nil
//
// # Errors
//
// Every error returned by Query is a *pipeline.PublicError: the server's
// message with its error number and SQLSTATE for the statement's own
// errors ('user'@'host' in privilege errors replaced by <user>); "database
// unavailable" for anything about connecting (those messages name users,
// hosts and databases); "statement timed out", "timed out", "canceled".
package mysql
