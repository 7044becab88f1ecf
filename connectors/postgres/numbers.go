package postgres

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/edgemcp/edgemcp/pipeline"
)

func int8Value(v int64) any { return pipeline.SafeInt(v) }

// float4Value widens through the shortest decimal that identifies the
// float32, so 0.1::float4 becomes 0.1 (as PostgreSQL prints it) rather than
// float64(float32(0.1)) = 0.10000000149011612.
func float4Value(v float32) any {
	f := float64(v)
	if special, ok := nonFinite(f); ok {
		return special
	}
	f, _ = strconv.ParseFloat(strconv.FormatFloat(f, 'g', -1, 32), 64)
	return f
}

func float8Value(v float64) any {
	if special, ok := nonFinite(v); ok {
		return special
	}
	return v
}

// nonFinite spells NaN and infinities as PostgreSQL does: JSON has no
// number for them.
func nonFinite(f float64) (string, bool) {
	switch {
	case math.IsNaN(f):
		return "NaN", true
	case math.IsInf(f, 1):
		return "Infinity", true
	case math.IsInf(f, -1):
		return "-Infinity", true
	}
	return "", false
}

func numericValue(n pgtype.Numeric) any {
	switch {
	case n.NaN:
		return "NaN"
	case n.InfinityModifier == pgtype.Infinity:
		return "Infinity"
	case n.InfinityModifier == pgtype.NegativeInfinity:
		return "-Infinity"
	}
	// For a finite value MarshalJSON is the exact plain decimal, scale kept.
	b, err := n.MarshalJSON()
	if err != nil {
		return nil
	}
	s := string(b)
	if fitsFloat64(s) {
		return json.Number(s)
	}
	return s
}

// fitsFloat64 reports whether the plain decimal s (no exponent) is the same
// number after a trip through float64 and back to its shortest decimal, i.e.
// whether a client that parses JSON numbers as doubles reads exactly s.
// 0.1 and 1.50 fit; 30 significant digits or 2^53+1 do not.
func fitsFloat64(s string) bool {
	sig, intDigits, fracZeros := decimalShape(s)
	// Up to 15 significant digits always survive float64 (DBL_DIG), as long
	// as the magnitude stays well inside the normal range.
	if sig <= 15 && intDigits <= 300 && fracZeros <= 300 {
		return true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return false
	}
	exact, ok := new(big.Rat).SetString(s)
	if !ok {
		return false
	}
	back, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return ok && exact.Cmp(back) == 0
}

// decimalShape measures a plain decimal: its significant digits (leading
// and trailing zeros excluded), the digits before the point, and the zeros
// right after the point before the first non-zero digit.
func decimalShape(s string) (sig, intDigits, fracZeros int) {
	first, last := -1, -1 // positions of the first and last non-zero digits
	pos := 0              // digit position, ignoring sign and point
	seenPoint, leadingFrac := false, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			seenPoint = true
			continue
		case c < '0' || c > '9':
			continue
		}
		if !seenPoint {
			intDigits++
		} else if leadingFrac && c == '0' && first < 0 {
			fracZeros++
		} else {
			leadingFrac = false
		}
		if c != '0' {
			if first < 0 {
				first = pos
			}
			last = pos
		}
		pos++
	}
	if first < 0 {
		return 0, intDigits, 0
	}
	return last - first + 1, intDigits, fracZeros
}
