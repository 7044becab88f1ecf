package mysql

import "github.com/edgemcp/edgemcp/connectors/internal/textargs"

// mysqlTime is the literal form both servers read for DATETIME and
// TIMESTAMP, with microseconds (the finest precision they store).
const mysqlTime = "2006-01-02 15:04:05.999999"

// bindArgs converts the pipeline's argument values to what the driver
// binds: times as 'YYYY-MM-DD HH:MM:SS.ffffff' in UTC (the session's time
// zone, so TIMESTAMP columns store the same instant and DATETIME the UTC
// wall clock), booleans as 1/0, and slices and maps as JSON text (for
// JSON_TABLE(?), JSON_CONTAINS(?) and friends).
func bindArgs(args []any) ([]any, error) { return textargs.Convert(args, mysqlTime) }
