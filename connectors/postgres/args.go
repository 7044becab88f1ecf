package postgres

import "time"

// bindArgs adapts the pipeline's validated argument values for pgx, which
// encodes them according to the parameter types PostgreSQL inferred for the
// statement: int64 and []int64 as int8/int8[] (or whatever integer or
// numeric type the parameter has), []string as text[], map[string]any and
// []any as JSON for json/jsonb parameters (and []any as an array for array
// parameters), time.Time as timestamptz/timestamp/date.
//
// Times are moved to UTC: a timestamptz is the same instant either way, and
// a timestamp (without time zone) parameter then receives the UTC wall
// clock, consistent with how timestamps are returned, instead of the wall
// clock of whatever offset the caller happened to write.
func bindArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case time.Time:
			out[i] = v.UTC()
		case []time.Time:
			u := make([]time.Time, len(v))
			for j, t := range v {
				u[j] = t.UTC()
			}
			out[i] = u
		default:
			out[i] = a
		}
	}
	return out
}
