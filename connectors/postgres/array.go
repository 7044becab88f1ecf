package postgres

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"
)

// Arrays become []any, nested once per dimension, elements normalized like
// scalars of the element type. Lower bounds other than 1 are dropped: JSON
// arrays start at 0 whatever PostgreSQL says.

// maxArrayDims is PostgreSQL's MAXDIM.
const maxArrayDims = 6

// binaryArrayDecoder parses array_send's format: ndim, has-null flag,
// element OID, (length, lower bound) per dimension, then each element as an
// int32 length (-1 for NULL) and its bytes. The element OID in the header
// picks the element decoder.
func binaryArrayDecoder(m *pgtype.Map, ext func(uint32) (extType, bool)) decodeFunc {
	var elemOID uint32
	var elemDec decodeFunc
	return func(raw []byte) (any, error) {
		if len(raw) < 12 {
			return nil, errors.New("array: short header")
		}
		ndim := int(int32(binary.BigEndian.Uint32(raw)))
		oid := binary.BigEndian.Uint32(raw[8:])
		raw = raw[12:]
		if ndim < 0 || ndim > maxArrayDims || len(raw) < 8*ndim {
			return nil, fmt.Errorf("array: bad dimensions (%d)", ndim)
		}
		dims := make([]int, ndim)
		total := 1
		for i := range dims {
			n := int(int32(binary.BigEndian.Uint32(raw[8*i:])))
			if n < 0 {
				return nil, errors.New("array: negative length")
			}
			dims[i] = n
			total *= n
		}
		raw = raw[8*ndim:]
		if ndim == 0 {
			return []any{}, nil
		}
		// Each element has at least a 4-byte length: bound the allocation
		// by what was actually received.
		if total > len(raw)/4 {
			return nil, errors.New("array: more elements than bytes")
		}
		if elemDec == nil || oid != elemOID {
			elemOID, elemDec = oid, decoderFor(m, oid, pgtype.BinaryFormatCode, ext)
		}
		flat := make([]any, total)
		for i := range flat {
			if len(raw) < 4 {
				return nil, errors.New("array: truncated element")
			}
			n := int(int32(binary.BigEndian.Uint32(raw)))
			raw = raw[4:]
			if n < 0 {
				continue // NULL
			}
			if n > len(raw) {
				return nil, errors.New("array: truncated element")
			}
			v, err := elemDec(raw[:n:n])
			if err != nil {
				return nil, fmt.Errorf("array element %d: %w", i, err)
			}
			flat[i] = v
			raw = raw[n:]
		}
		return nest(flat, dims), nil
	}
}

// nest reshapes a row-major flat slice into nested []any of the given
// dimensions.
func nest(flat []any, dims []int) []any {
	if len(dims) == 1 {
		return flat
	}
	n := dims[0]
	out := make([]any, n)
	step := 1
	for _, d := range dims[1:] {
		step *= d
	}
	for i := range out {
		out[i] = nest(flat[i*step:(i+1)*step], dims[1:])
	}
	return out
}

// textArrayDecoder parses PostgreSQL's array text form, used for arrays of
// types that come as text (enums, citext, geometric types...).
func textArrayDecoder(a arrayInfo, elemDec decodeFunc) decodeFunc {
	return func(raw []byte) (any, error) {
		p := textArrayParser{s: string(raw), delim: a.delim, elem: elemDec}
		return p.parse()
	}
}

// textArrayParser reads array_out's grammar:
//
//	[ "[lo:hi]"... "=" ] "{" [ item { delim item } ] "}"
//	item = "{" ... "}" | "NULL" | unquoted | '"' quoted with \" and \\ '"'
type textArrayParser struct {
	s     string
	i     int
	delim byte
	elem  decodeFunc
}

func (p *textArrayParser) parse() (any, error) {
	// Dimension decoration, present only when a lower bound is not 1.
	if strings.HasPrefix(p.s, "[") {
		eq := strings.Index(p.s, "=")
		if eq < 0 {
			return nil, errors.New("array: bad dimension decoration")
		}
		p.i = eq + 1
	}
	v, err := p.list(0)
	if err != nil {
		return nil, err
	}
	if p.i != len(p.s) {
		return nil, errors.New("array: trailing characters")
	}
	return v, nil
}

func (p *textArrayParser) list(depth int) ([]any, error) {
	if depth >= maxArrayDims || p.i >= len(p.s) || p.s[p.i] != '{' {
		return nil, errors.New("array: expected '{'")
	}
	p.i++
	out := []any{}
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return out, nil
	}
	for {
		if p.i >= len(p.s) {
			return nil, errors.New("array: unterminated")
		}
		var v any
		var err error
		switch p.s[p.i] {
		case '{':
			v, err = p.list(depth + 1)
		case '"':
			v, err = p.quoted()
		default:
			v, err = p.unquoted()
		}
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if p.i >= len(p.s) {
			return nil, errors.New("array: unterminated")
		}
		switch p.s[p.i] {
		case p.delim:
			p.i++
		case '}':
			p.i++
			return out, nil
		default:
			return nil, fmt.Errorf("array: unexpected %q", p.s[p.i])
		}
	}
}

func (p *textArrayParser) quoted() (any, error) {
	p.i++ // opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch c {
		case '\\':
			p.i++
			if p.i >= len(p.s) {
				return nil, errors.New("array: unterminated escape")
			}
			b.WriteByte(p.s[p.i])
		case '"':
			p.i++
			return p.elem([]byte(b.String()))
		default:
			b.WriteByte(c)
		}
		p.i++
	}
	return nil, errors.New("array: unterminated quote")
}

func (p *textArrayParser) unquoted() (any, error) {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != p.delim && p.s[p.i] != '}' {
		p.i++
	}
	tok := p.s[start:p.i]
	if tok == "NULL" {
		return nil, nil
	}
	return p.elem([]byte(tok))
}
