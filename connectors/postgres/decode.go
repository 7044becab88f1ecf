package postgres

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"

	"github.com/jackc/pgx/v5/pgtype"
)

// decodeFunc turns one raw column value (never nil: NULL is handled by the
// caller) into a JSON-ready value. The raw bytes belong to pgx and are only
// valid until the next row, so a decodeFunc must copy what it keeps.
type decodeFunc func(raw []byte) (any, error)

// decoderFor picks the decoder of a column (or array element) once, from its
// type OID and the wire format pgx asked for. m is the connection's type map;
// the returned function must only be used while that connection is held.
//
// ext resolves types pgx does not know (enums, citext, domain arrays...);
// it may be nil, in which case such values are kept as text.
func decoderFor(m *pgtype.Map, oid uint32, format int16, ext func(uint32) (extType, bool)) decodeFunc {
	switch oid {
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID, pgtype.UnknownOID:
		// Same bytes in text and binary format.
		return func(raw []byte) (any, error) { return string(raw), nil }
	case pgtype.JSONOID:
		return func(raw []byte) (any, error) { return json.RawMessage(clone(raw)), nil }
	case pgtype.JSONBOID:
		return func(raw []byte) (any, error) {
			if format == pgtype.BinaryFormatCode {
				// Binary jsonb is a version byte (1) then the text.
				if len(raw) == 0 || raw[0] != 1 {
					return nil, fmt.Errorf("unsupported jsonb binary version")
				}
				raw = raw[1:]
			}
			return json.RawMessage(clone(raw)), nil
		}
	case pgtype.BoolOID:
		return scanAs(m, oid, format, func(v bool) any { return v })
	case pgtype.Int2OID, pgtype.Int4OID:
		return scanAs(m, oid, format, func(v int64) any { return v })
	case pgtype.OIDOID:
		return scanAs(m, oid, format, func(v uint32) any { return int64(v) })
	case pgtype.Int8OID:
		return scanAs(m, oid, format, int8Value)
	case pgtype.Float4OID:
		return scanAs(m, oid, format, float4Value)
	case pgtype.Float8OID:
		return scanAs(m, oid, format, float8Value)
	case pgtype.NumericOID:
		return scanAs(m, oid, format, numericValue)
	case pgtype.ByteaOID:
		if format == pgtype.BinaryFormatCode {
			return func(raw []byte) (any, error) { return base64.StdEncoding.EncodeToString(raw), nil }
		}
		return scanAs(m, oid, format, func(v []byte) any { return base64.StdEncoding.EncodeToString(v) })
	case pgtype.UUIDOID:
		return scanAs(m, oid, format, func(v pgtype.UUID) any { return uuidString(v.Bytes) })
	case pgtype.DateOID:
		return scanAs(m, oid, format, dateValue)
	case pgtype.TimeOID:
		return scanAs(m, oid, format, func(v pgtype.Time) any { return timeOfDayString(v.Microseconds) })
	case pgtype.TimestampOID:
		return scanAs(m, oid, format, timestampValue)
	case pgtype.TimestamptzOID:
		return scanAs(m, oid, format, timestamptzValue)
	case pgtype.IntervalOID:
		return scanAs(m, oid, format, intervalString)
	case pgtype.InetOID:
		return scanAs(m, oid, format, func(p netip.Prefix) any {
			// PostgreSQL prints a host address without its /32 or /128.
			if p.Bits() == p.Addr().BitLen() {
				return p.Addr().String()
			}
			return p.String()
		})
	case pgtype.CIDROID:
		return scanAs(m, oid, format, func(p netip.Prefix) any { return p.String() })
	case pgtype.MacaddrOID, pgtype.Macaddr8OID:
		return scanAs(m, oid, format, func(v net.HardwareAddr) any { return v.String() })
	}

	if format == pgtype.BinaryFormatCode {
		if _, ok := builtinTypes().arrays[oid]; ok {
			return binaryArrayDecoder(m, ext)
		}
		// pgx only asks binary for the types above (binaryOIDs); anything
		// else in binary is a type some other code registered. Let pgx
		// decode it and render its text form.
		return genericDecoder(m, oid, format)
	}
	if a, ok := builtinTypes().arrays[oid]; ok {
		return textArrayDecoder(a, decoderFor(m, a.elem, pgtype.TextFormatCode, ext))
	}
	if ext != nil {
		if t, ok := ext(oid); ok && t.isArray {
			a := arrayInfo{elem: t.elem, delim: t.delim}
			return textArrayDecoder(a, decoderFor(m, a.elem, pgtype.TextFormatCode, ext))
		}
	}
	// Text format: PostgreSQL's own rendering of the value.
	return func(raw []byte) (any, error) { return string(raw), nil }
}

// scanAs decodes through pgx's codec for oid into a T, then normalizes it.
func scanAs[T any](m *pgtype.Map, oid uint32, format int16, norm func(T) any) decodeFunc {
	return func(raw []byte) (any, error) {
		var v T
		if err := m.Scan(oid, format, raw, &v); err != nil {
			return nil, err
		}
		return norm(v), nil
	}
}

// genericDecoder renders a binary value of a type registered with pgx in its
// text form via pgx's own encoder; a last resort that registerTextOnly normally
// makes unnecessary.
func genericDecoder(m *pgtype.Map, oid uint32, format int16) decodeFunc {
	return func(raw []byte) (any, error) {
		t, ok := m.TypeForOID(oid)
		if !ok {
			return base64.StdEncoding.EncodeToString(raw), nil
		}
		v, err := t.Codec.DecodeValue(m, oid, format, raw)
		if err != nil {
			return nil, err
		}
		text, err := m.Encode(oid, pgtype.TextFormatCode, v, nil)
		if err != nil {
			return fmt.Sprint(v), nil
		}
		return string(text), nil
	}
}

func clone(b []byte) []byte {
	out := make([]byte, len(b))
	copy(out, b)
	return out
}

const hexDigits = "0123456789abcdef"

func uuidString(b [16]byte) string {
	var out [36]byte
	j := 0
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j] = hexDigits[c>>4]
		out[j+1] = hexDigits[c&0x0f]
		j += 2
	}
	return string(out[:])
}
