package runtime

import (
	"strconv"
	"time"
)

// The encoders below turn typed ---@arg values into ARGV strings. Redis
// receives every argument as a string; Lua scripts read them with tonumber.

// FormatInt encodes an int64 in decimal.
func FormatInt(n int64) string { return strconv.FormatInt(n, 10) }

// FormatFloat encodes a float64 in the shortest form that parses back to
// the same value (Lua's tonumber reads it, exponents included).
func FormatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// FormatBool encodes true as "1" and false as "0".
func FormatBool(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// FormatDuration encodes d as a whole number of unit (time.Millisecond or
// time.Second), truncated toward zero as PEXPIRE/EXPIRE arguments expect.
func FormatDuration(d, unit time.Duration) string {
	return strconv.FormatInt(int64(d/unit), 10)
}

// FormatTime encodes t as Unix time in unit (time.Millisecond or
// time.Second), as PEXPIREAT/EXPIREAT arguments expect.
func FormatTime(t time.Time, unit time.Duration) string {
	if unit == time.Second {
		return strconv.FormatInt(t.Unix(), 10)
	}
	return strconv.FormatInt(t.UnixMilli(), 10)
}
