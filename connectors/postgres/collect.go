package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// result is a statement's normalized rows plus the columns whose type was
// unknown to pgx and to our cache: their values are kept as text until
// finish has looked the types up.
type result struct {
	rows    *pipeline.Rows
	pending []int // column indexes
	fields  []pgconn.FieldDescription
	// truncated says why rows were left out of a result collected with
	// limits.cut; "" when it is whole.
	truncated string
}

// limits bound a result as collect reads it.
type limits struct {
	rows int
	size int64
	// cut ends a result at a limit and says so (result.truncated), for
	// statements whose rows the server bounds already (an agent's FETCH):
	// the rest is read and dropped. Without it a result over a limit is
	// abandoned and fails.
	cut bool
}

// limits are the connector's max_rows and max_result_size.
func (c *Connector) limits() limits { return limits{rows: c.maxRows, size: c.maxSize} }

// collect reads and normalizes every row, then closes rows. Decoders are
// chosen once per column, not per value.
//
// The result's size is counted as the rows arrive: each value's bytes as
// they came on the wire (rows.RawValues, no copy) plus
// pipeline.ValueOverhead. A result over max_result_size, or over max_rows,
// is abandoned (abandon) before the next row is decoded.
func (c *Connector) collect(conn *pgx.Conn, rows pgx.Rows, lim limits) (*result, error) {
	defer rows.Close()
	m := conn.TypeMap()
	res := &result{rows: &pipeline.Rows{Values: [][]any{}}}
	var decs []decodeFunc
	setup := func() {
		// pgconn reuses this slice for the connection's next statement
		// (finish runs one): keep a copy.
		res.fields = slices.Clone(rows.FieldDescriptions())
		res.rows.Columns = make([]string, len(res.fields))
		decs = make([]decodeFunc, len(res.fields))
		for i, fd := range res.fields {
			res.rows.Columns[i] = fd.Name
			decs[i] = decoderFor(m, fd.DataTypeOID, fd.Format, c.ext.get)
			if fd.Format == pgtype.TextFormatCode && c.needsLookup(m, fd.DataTypeOID) {
				res.pending = append(res.pending, i)
			}
		}
	}
	var size int64
	for rows.Next() {
		if decs == nil {
			setup()
		}
		if len(res.rows.Values) == lim.rows {
			if lim.cut {
				res.truncated = fmt.Sprintf("max_rows %d", lim.rows)
				return res, nil
			}
			abandon(conn)
			return nil, pipeline.TooManyRows(lim.rows)
		}
		raw := rows.RawValues()
		size += int64(len(raw)) * pipeline.ValueOverhead
		for _, b := range raw {
			size += int64(len(b))
		}
		if size > lim.size {
			if lim.cut {
				res.truncated = "max_result_size " + pipeline.SizeText(lim.size)
				return res, nil
			}
			abandon(conn)
			return nil, pipeline.ResultTooLarge(lim.size)
		}
		vals := make([]any, len(raw))
		for i, b := range raw {
			if b == nil {
				continue // NULL
			}
			v, err := decs[i](b)
			if err != nil {
				return nil, &pipeline.PublicError{
					Public: fmt.Sprintf("cannot decode column %q (type oid %d)", res.rows.Columns[i], res.fields[i].DataTypeOID),
					Cause:  err,
				}
			}
			vals[i] = v
		}
		res.rows.Values = append(res.rows.Values, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if decs == nil {
		setup() // no rows: the columns are still known
	}
	return res, nil
}

// abandon stops the statement whose result collect refuses, so that the
// server neither produces nor sends the rest: rows.Close would otherwise
// read all of it to drain it. The cancel request is the one a client
// disconnect sends (Open); once the server has it, rows.Close reads
// only what was already on the way and the statement's error, and the
// session reset that follows every statement (resetSession) rolls back what
// the cancel left: the connection goes back to the pool. If the cancel
// cannot be sent, rows.Close drains the result as before.
func abandon(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), cancelDeadline)
	defer cancel()
	_ = conn.PgConn().CancelRequest(ctx)
}

// needsLookup reports whether values of oid came as text with no way yet to
// tell whether they are arrays: a type neither pgx nor our cache knows.
func (c *Connector) needsLookup(m *pgtype.Map, oid uint32) bool {
	if _, ok := m.TypeForOID(oid); ok {
		return false
	}
	_, ok := c.ext.get(oid)
	return !ok
}

// finish resolves the pending columns' types on conn (free again once the
// rows are read) and re-decodes the values of those that are arrays.
func (c *Connector) finish(ctx context.Context, conn *pgx.Conn, res *result) error {
	if len(res.pending) == 0 {
		return nil
	}
	oids := make([]uint32, len(res.pending))
	for i, col := range res.pending {
		oids[i] = res.fields[col].DataTypeOID
	}
	c.ext.resolve(ctx, conn, oids)
	m := conn.TypeMap()
	for _, col := range res.pending {
		t, ok := c.ext.get(res.fields[col].DataTypeOID)
		if !ok || !t.isArray {
			continue
		}
		dec := decoderFor(m, res.fields[col].DataTypeOID, pgtype.TextFormatCode, c.ext.get)
		for _, row := range res.rows.Values {
			s, ok := row[col].(string)
			if !ok {
				continue
			}
			v, err := dec([]byte(s))
			if err != nil {
				return &pipeline.PublicError{
					Public: fmt.Sprintf("cannot decode column %q (type oid %d)", res.rows.Columns[col], res.fields[col].DataTypeOID),
					Cause:  err,
				}
			}
			row[col] = v
		}
	}
	return nil
}
