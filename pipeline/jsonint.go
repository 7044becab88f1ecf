package pipeline

import "strconv"

// MaxSafeInt is 2^53: beyond it a JSON number read as an IEEE double (every
// JavaScript client, and most others) silently loses digits.
const MaxSafeInt = 1 << 53

// SafeInt is v as connectors put it in Rows: a number within ±2^53, else
// its exact decimal string.
func SafeInt(v int64) any {
	if v > MaxSafeInt || v < -MaxSafeInt {
		return strconv.FormatInt(v, 10)
	}
	return v
}

// SafeUint is SafeInt for unsigned values (MySQL BIGINT UNSIGNED, BIT).
func SafeUint(v uint64) any {
	if v > MaxSafeInt {
		return strconv.FormatUint(v, 10)
	}
	return int64(v)
}
