package sqlagent

import (
	"strconv"

	"github.com/edgemcp/edgemcp/pipeline"
)

// answer is a query's result as the agent reads it:
//
//	{"columns":["id","name"],"rows":[[1,"a"]],"row_count":1,"truncated":false}
//
// with "reason" beside "truncated": true ("max_rows 100"). Rows are
// arrays, not objects: a join's two "id" columns both stay, and the
// column names are not repeated on every row.
type answer struct {
	rows      *pipeline.Rows
	truncated string
}

func (a answer) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 256), `{"columns":[`...)
	for i, c := range a.rows.Columns {
		if i > 0 {
			b = append(b, ',')
		}
		b = pipeline.AppendJSONString(b, c, true)
	}
	b = append(b, `],"rows":[`...)
	for i, row := range a.rows.Values {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for j, v := range row {
			if j > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = pipeline.AppendJSON(b, v); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	b = append(b, `],"row_count":`...)
	b = strconv.AppendInt(b, int64(len(a.rows.Values)), 10)
	if a.truncated == "" {
		return append(b, `,"truncated":false}`...), nil
	}
	b = append(b, `,"truncated":true,"reason":`...)
	b = pipeline.AppendJSONString(b, a.truncated, true)
	return append(b, '}'), nil
}
