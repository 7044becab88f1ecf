package pipeline

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// The catalog statements of every AgentSQL connector answer in the same
// column order, so that one function assembles them:
//
//	tables:       schema, name, type, rows_estimate, comment
//	columns:      name, type, nullable, default, comment, primary_key_position
//	indexes:      name, unique, column, definition   (a row per indexed column, in order)
//	foreign keys: name, column, ref_schema, ref_table, ref_column   (a row per column, in order)
//
// Values are the connectors' normalized ones; booleans may come as
// numbers or YES/NO (MySQL's information_schema).

// TablesFromRows reads the answer of a tables statement.
func TablesFromRows(r *Rows) []TableInfo {
	out := make([]TableInfo, 0, len(r.Values))
	for _, v := range r.Values {
		t := TableInfo{Schema: catalogText(v[0]), Name: catalogText(v[1]), Type: catalogText(v[2]), Comment: catalogText(v[4])}
		if n, ok := catalogInt(v[3]); ok && n >= 0 {
			t.RowsEstimate = &n
		}
		out = append(out, t)
	}
	return out
}

// DetailFromRows assembles a table's description from the answers of its
// columns, indexes and foreign keys statements.
func DetailFromRows(t TableInfo, columns, indexes, fks *Rows) *TableDetail {
	d := &TableDetail{TableInfo: t, Columns: []ColumnInfo{}}
	type keyCol struct {
		pos  int64
		name string
	}
	var pk []keyCol
	for _, v := range columns.Values {
		c := ColumnInfo{Name: catalogText(v[0]), Type: catalogText(v[1]), Nullable: catalogBool(v[2]), Comment: catalogText(v[4])}
		if v[3] != nil {
			s := catalogText(v[3])
			c.Default = &s
		}
		if n, ok := catalogInt(v[5]); ok && n > 0 {
			pk = append(pk, keyCol{n, c.Name})
		}
		d.Columns = append(d.Columns, c)
	}
	sort.Slice(pk, func(i, j int) bool { return pk[i].pos < pk[j].pos })
	for _, k := range pk {
		d.PrimaryKey = append(d.PrimaryKey, k.name)
	}
	for _, v := range indexes.Values {
		name := catalogText(v[0])
		if n := len(d.Indexes); n == 0 || d.Indexes[n-1].Name != name {
			d.Indexes = append(d.Indexes, IndexInfo{Name: name, Unique: catalogBool(v[1]), Definition: catalogText(v[3])})
		}
		ix := &d.Indexes[len(d.Indexes)-1]
		ix.Columns = append(ix.Columns, catalogText(v[2]))
	}
	for i, v := range fks.Values {
		name := catalogText(v[0])
		if i == 0 || catalogText(fks.Values[i-1][0]) != name {
			d.ForeignKeys = append(d.ForeignKeys, ForeignKeyInfo{Name: name, RefSchema: catalogText(v[2]), RefTable: catalogText(v[3])})
		}
		fk := &d.ForeignKeys[len(d.ForeignKeys)-1]
		fk.Columns = append(fk.Columns, catalogText(v[1]))
		fk.RefColumns = append(fk.RefColumns, catalogText(v[4]))
	}
	return d
}

func catalogText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.RawMessage:
		return string(v)
	}
	return fmt.Sprint(v)
}

func catalogBool(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return v == "YES" || v == "1" || v == "true" || v == "t"
	}
	n, ok := catalogInt(v)
	return ok && n != 0
}

// catalogInt reads a count: an integer, a whole-valued float (Postgres
// reltuples), or their text.
func catalogInt(v any) (int64, bool) {
	var f float64
	switch v := v.(type) {
	case int64:
		return v, true
	case float64:
		f = v
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n, true
		}
		var err error
		if f, err = v.Float64(); err != nil {
			return 0, false
		}
	case string:
		var err error
		if f, err = strconv.ParseFloat(v, 64); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.Abs(f) > 1<<62 {
		return 0, false
	}
	return int64(f), true
}
