package luagenimpl

import (
	"strconv"
	"time"
	"unsafe"
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

// The Append encoders below are the Format encoders for a generated method
// that formats its numbers into one buffer held with its KEYS and ARGV
// (recycled through a [CallPool]). Each appends to *buf and returns the
// appended bytes as a string that shares buf's memory: the caller must
// never change those bytes afterwards (appending more is fine). When buf
// has no room left, append grows it, and the string is as safe, only no
// longer free.

// AppendInt is [FormatInt] appending to *buf.
func AppendInt(buf *[]byte, n int64) string {
	start := len(*buf)
	*buf = strconv.AppendInt(*buf, n, 10)
	return tail(*buf, start)
}

// AppendFloat is [FormatFloat] appending to *buf.
func AppendFloat(buf *[]byte, f float64) string {
	start := len(*buf)
	*buf = strconv.AppendFloat(*buf, f, 'g', -1, 64)
	return tail(*buf, start)
}

// AppendDuration is [FormatDuration] appending to *buf.
func AppendDuration(buf *[]byte, d, unit time.Duration) string {
	return AppendInt(buf, int64(d/unit))
}

// AppendTime is [FormatTime] appending to *buf.
func AppendTime(buf *[]byte, t time.Time, unit time.Duration) string {
	if unit == time.Second {
		return AppendInt(buf, t.Unix())
	}
	return AppendInt(buf, t.UnixMilli())
}

// tail returns b[start:] as a string without copying.
func tail(b []byte, start int) string {
	if len(b) == start {
		return ""
	}
	return unsafe.String(&b[start], len(b)-start)
}
