package postgres

import (
	"sync"

	"github.com/jackc/pgx/v5/pgtype"
)

// binaryOIDs are the scalar types this package normalizes itself (decoderFor).
// pgx asks for them, and for arrays of them, in binary format, which is
// compact and exact.
var binaryOIDs = map[uint32]bool{
	pgtype.BoolOID: true,
	pgtype.Int2OID: true, pgtype.Int4OID: true, pgtype.Int8OID: true, pgtype.OIDOID: true,
	pgtype.Float4OID: true, pgtype.Float8OID: true, pgtype.NumericOID: true,
	pgtype.TextOID: true, pgtype.VarcharOID: true, pgtype.BPCharOID: true,
	pgtype.NameOID: true, pgtype.UnknownOID: true,
	pgtype.ByteaOID: true, pgtype.UUIDOID: true,
	pgtype.JSONOID: true, pgtype.JSONBOID: true,
	pgtype.DateOID: true, pgtype.TimeOID: true, pgtype.TimestampOID: true,
	pgtype.TimestamptzOID: true, pgtype.IntervalOID: true,
	pgtype.InetOID: true, pgtype.CIDROID: true,
	pgtype.MacaddrOID: true, pgtype.Macaddr8OID: true,
}

// arrayInfo describes an array type: the element type and the delimiter
// PostgreSQL uses between elements in the text form (';' for box, else ',').
type arrayInfo struct {
	elem  uint32
	delim byte
}

// builtinTypes is what pgx's default type map tells us, computed once:
// the array types it knows, and the registered types we do not normalize
// ourselves. Those are switched to text format on every connection
// (textOnly), so that PostgreSQL itself renders them and "anything else →
// its text form" holds without a Go re-encoding that might differ from the
// server's spelling (or not exist, as for record).
var builtinTypes = sync.OnceValue(func() (b struct {
	arrays   map[uint32]arrayInfo
	textOnly []*pgtype.Type
}) {
	b.arrays = map[uint32]arrayInfo{}
	m := pgtype.NewMap()
	// Built-in type OIDs are all below FirstNormalObjectId (16384).
	for oid := uint32(1); oid < 16384; oid++ {
		t, ok := m.TypeForOID(oid)
		if !ok || t.OID != oid {
			continue
		}
		keepBinary := binaryOIDs[oid]
		if ac, ok := t.Codec.(*pgtype.ArrayCodec); ok && ac.ElementType != nil {
			d := ac.Delimiter
			if d == 0 {
				d = ','
			}
			b.arrays[oid] = arrayInfo{elem: ac.ElementType.OID, delim: d}
			keepBinary = binaryOIDs[ac.ElementType.OID]
		}
		if !keepBinary {
			b.textOnly = append(b.textOnly, &pgtype.Type{
				Name:  t.Name,
				OID:   t.OID,
				Codec: &pgtype.TextFormatOnlyCodec{Codec: t.Codec},
			})
		}
	}
	return b
})

// registerTextOnly switches the connection's type map to text results for
// the types we do not decode in binary. Strings are always sent as text
// parameters by pgx, so parameter encoding is unaffected for our argument
// types.
func registerTextOnly(m *pgtype.Map) {
	for _, t := range builtinTypes().textOnly {
		m.RegisterType(t)
	}
}
