package postgres

import (
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// Layouts of the normalized time values (see the package doc). Fractional seconds
// are printed only when present, trailing zeros trimmed, as PostgreSQL does.
const (
	layoutTimestamptz = time.RFC3339Nano                // always UTC, so always "Z"
	layoutTimestamp   = "2006-01-02T15:04:05.999999999" // wall clock, no offset
	layoutDate        = "2006-01-02"
)

func infinity(m pgtype.InfinityModifier) (string, bool) {
	switch m {
	case pgtype.Infinity:
		return "infinity", true
	case pgtype.NegativeInfinity:
		return "-infinity", true
	}
	return "", false
}

func timestamptzValue(v pgtype.Timestamptz) any {
	if s, ok := infinity(v.InfinityModifier); ok {
		return s
	}
	return v.Time.UTC().Format(layoutTimestamptz)
}

func timestampValue(v pgtype.Timestamp) any {
	if s, ok := infinity(v.InfinityModifier); ok {
		return s
	}
	return v.Time.Format(layoutTimestamp)
}

func dateValue(v pgtype.Date) any {
	if s, ok := infinity(v.InfinityModifier); ok {
		return s
	}
	return v.Time.Format(layoutDate)
}

const (
	usPerSecond = int64(time.Second / time.Microsecond)
	usPerMinute = 60 * usPerSecond
	usPerHour   = 60 * usPerMinute
)

// timeOfDayString prints microseconds since midnight as PostgreSQL's time
// type does: HH:MM:SS with the fraction only when non-zero.
func timeOfDayString(us int64) string {
	var b strings.Builder
	appendClock(&b, us)
	return b.String()
}

// appendClock writes |us| as HH:MM:SS[.ffffff]; hours may exceed 24.
func appendClock(b *strings.Builder, us int64) {
	if us < 0 {
		us = -us
	}
	h, rest := us/usPerHour, us%usPerHour
	m, rest := rest/usPerMinute, rest%usPerMinute
	s, frac := rest/usPerSecond, rest%usPerSecond
	pad2(b, h)
	b.WriteByte(':')
	pad2(b, m)
	b.WriteByte(':')
	pad2(b, s)
	if frac != 0 {
		f := strconv.FormatInt(frac+usPerSecond, 10)[1:] // six digits, zero-padded
		b.WriteByte('.')
		b.WriteString(strings.TrimRight(f, "0"))
	}
}

func pad2(b *strings.Builder, v int64) {
	if v < 10 {
		b.WriteByte('0')
	}
	b.WriteString(strconv.FormatInt(v, 10))
}

// intervalString reproduces PostgreSQL's default output (IntervalStyle
// "postgres"), e.g. "1 year 2 mons -3 days +04:05:06.5", so that callers
// see the same text as psql.
func intervalString(v pgtype.Interval) any {
	var b strings.Builder
	isZero, isBefore := true, false
	part := func(n int64, unit string) {
		if n == 0 {
			return
		}
		if !isZero {
			b.WriteByte(' ')
		}
		if isBefore && n > 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.FormatInt(n, 10))
		b.WriteByte(' ')
		b.WriteString(unit)
		if n != 1 {
			b.WriteByte('s')
		}
		isBefore, isZero = n < 0, false
	}
	months := int64(v.Months)
	part(months/12, "year")
	part(months%12, "mon")
	part(int64(v.Days), "day")
	if isZero || v.Microseconds != 0 {
		if !isZero {
			b.WriteByte(' ')
		}
		switch {
		case v.Microseconds < 0:
			b.WriteByte('-')
		case isBefore:
			b.WriteByte('+')
		}
		appendClock(&b, v.Microseconds)
	}
	return b.String()
}
