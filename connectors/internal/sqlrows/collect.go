// Package sqlrows reads a database/sql result into pipeline.Rows under a
// connector's limits, for the drivers built on database/sql (mysql,
// sqlite); each driver says how its columns' values are normalized.
package sqlrows

import (
	"database/sql"
	"fmt"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Limits bound a result as Collect reads it.
type Limits struct {
	Rows int
	Size int64
	// Cut ends a result at a limit and says so (an agent's answer)
	// instead of failing; either way the rest is abandoned.
	Cut bool
}

// Normalizer returns, once per column, the function that turns the
// column's driver values into JSON-ready values.
type Normalizer func(col *sql.ColumnType) func(v any) (any, error)

// Collect reads every row, normalized, and closes rows. When the result
// has more than lim.Rows rows, or its values count more than lim.Size
// bytes (pipeline.ValueSize of each normalized value, counted row by
// row), it calls abandon (when not nil) before closing rows, so that a
// driver that would drain the rest of an unbounded result does not; then,
// with lim.Cut, it returns the rows read so far and why it stopped
// ("max_rows 100").
func Collect(rows *sql.Rows, lim Limits, normalizer Normalizer, abandon func()) (*pipeline.Rows, string, error) {
	defer rows.Close()
	cols, err := rows.ColumnTypes()
	if err != nil {
		return nil, "", err
	}
	res := &pipeline.Rows{Columns: make([]string, len(cols)), Values: [][]any{}}
	norms := make([]func(any) (any, error), len(cols))
	for i, ct := range cols {
		res.Columns[i] = ct.Name()
		norms[i] = normalizer(ct)
	}
	stop := func() {
		if abandon != nil {
			abandon()
		}
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var size int64
	for rows.Next() {
		if len(res.Values) == lim.Rows {
			stop()
			if lim.Cut {
				return res, fmt.Sprintf("max_rows %d", lim.Rows), nil
			}
			return nil, "", pipeline.TooManyRows(lim.Rows)
		}
		// Scanning into *any copies []byte values out of the driver.
		if err := rows.Scan(ptrs...); err != nil {
			return nil, "", err
		}
		row := make([]any, len(cols))
		for i, v := range vals {
			nv, err := norms[i](v)
			if err != nil {
				return nil, "", &pipeline.PublicError{Public: fmt.Sprintf("cannot decode column %q", res.Columns[i]), Cause: err}
			}
			row[i] = nv
			vals[i] = nil
			size += pipeline.ValueSize(nv)
		}
		if size > lim.Size {
			stop()
			if lim.Cut {
				return res, "max_result_size " + pipeline.SizeText(lim.Size), nil
			}
			return nil, "", pipeline.ResultTooLarge(lim.Size)
		}
		res.Values = append(res.Values, row)
	}
	return res, "", rows.Err()
}
