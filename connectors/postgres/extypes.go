package postgres

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"
)

// extType is what we need to know about a type pgx has no codec for (an
// enum, citext, an array of either, an array of a domain ...): only
// whether it is an array, and of what. Everything else about such types
// arrives as text and stays text.
type extType struct {
	isArray bool
	elem    uint32 // element type, domains resolved to their base type
	delim   byte
}

// extTypes caches pg_type lookups for the life of the connector: OIDs of
// existing types do not change, and a type recreated gets a new OID.
type extTypes struct {
	m sync.Map // uint32 → extType
}

func (e *extTypes) get(oid uint32) (extType, bool) {
	v, ok := e.m.Load(oid)
	if !ok {
		return extType{}, false
	}
	return v.(extType), true
}

// lookupTypesSQL resolves array types and, one level deep, domain element
// types (PostgreSQL already reports a domain column under its base type).
// The delimiter is the element type's.
const lookupTypesSQL = `SELECT t.oid::int8,
       t.typcategory = 'A' AND t.typelem <> 0,
       CASE WHEN e.typtype = 'd' THEN e.typbasetype ELSE t.typelem END::int8,
       COALESCE(e.typdelim::text, ',')
FROM pg_catalog.pg_type t
LEFT JOIN pg_catalog.pg_type e ON e.oid = t.typelem
WHERE t.oid::int8 = ANY($1::int8[])`

// resolve looks up the OIDs not cached yet, on the connection already held
// (after the statement's rows are read, so it is free). A failure only
// means those values stay text: it never fails the query.
func (e *extTypes) resolve(ctx context.Context, conn *pgx.Conn, oids []uint32) {
	var missing []int64
	for _, oid := range oids {
		if _, ok := e.get(oid); !ok {
			missing = append(missing, int64(oid))
		}
	}
	if len(missing) == 0 {
		return
	}
	rows, err := conn.Query(ctx, lookupTypesSQL, missing)
	if err != nil {
		return
	}
	defer rows.Close()
	for rows.Next() {
		var oid, elem int64
		var isArray bool
		var delim string
		if rows.Scan(&oid, &isArray, &elem, &delim) != nil {
			return
		}
		t := extType{isArray: isArray, elem: uint32(elem), delim: ','}
		if delim != "" {
			t.delim = delim[0]
		}
		e.m.Store(uint32(oid), t)
	}
}
