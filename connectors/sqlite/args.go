package sqlite

import (
	"time"

	"github.com/edgemcp/edgemcp/connectors/internal/textargs"
)

// bindArgs converts the pipeline's argument values to what SQLite stores:
// times as RFC 3339 text in UTC (the form SQLite's date functions read),
// booleans as 1/0, and slices and maps as JSON text for json_each(?) and
// friends.
func bindArgs(args []any) ([]any, error) { return textargs.Convert(args, time.RFC3339Nano) }
