package lua51

import (
	"math"
	"strconv"
	"strings"
)

// Lua 5.1's string → number conversion (luaO_str2d), which its lexer reads
// numerals with and tonumber follows: C's strtod, so "1e2", " 12 " and
// "0x10" are numbers.

// Str2d is luaO_str2d: strtod over s (leading spaces skipped, hex and
// inf/nan accepted as glibc does), then only trailing spaces allowed.
func Str2d(s string) (float64, bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	f, n := Strtod(s[i:])
	if n == 0 {
		return 0, false
	}
	rest := s[i+n:]
	for j := 0; j < len(rest); j++ {
		if !isSpace(rest[j]) {
			return 0, false
		}
	}
	return f, true
}

// Strtod parses the longest prefix of s that C's strtod accepts and
// returns its value and length (0 when nothing parses).
func Strtod(s string) (float64, int) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	lower := strings.ToLower(s[i:])
	switch {
	case strings.HasPrefix(lower, "infinity"):
		return signed(math.Inf(1), neg), i + 8
	case strings.HasPrefix(lower, "inf"):
		return signed(math.Inf(1), neg), i + 3
	case strings.HasPrefix(lower, "nan"):
		n := i + 3
		if n < len(s) && s[n] == '(' {
			if j := strings.IndexByte(s[n:], ')'); j >= 0 {
				n += j + 1
			}
		}
		return signed(math.NaN(), neg), n
	}
	if strings.HasPrefix(lower, "0x") {
		j := i + 2
		start := j
		for j < len(s) && isHex(s[j]) {
			j++
		}
		if j < len(s) && s[j] == '.' {
			j++
			for j < len(s) && isHex(s[j]) {
				j++
			}
		}
		if j == start || (j == start+1 && s[start] == '.') {
			return 0, i + 1 // just the "0"
		}
		mant := s[start:j]
		k := j
		if k < len(s) && (s[k] == 'p' || s[k] == 'P') {
			e := k + 1
			if e < len(s) && (s[e] == '+' || s[e] == '-') {
				e++
			}
			if e < len(s) && isDigit(s[e]) {
				for e < len(s) && isDigit(s[e]) {
					e++
				}
				k = e
			}
		}
		exp := "p0"
		if k > j {
			exp = s[j:k]
		}
		f, err := strconv.ParseFloat("0x"+mant+exp, 64)
		if err != nil && !isRangeErr(err) {
			return 0, 0
		}
		return signed(f, neg), k
	}
	j := i
	digits := 0
	for j < len(s) && isDigit(s[j]) {
		j++
		digits++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, 0
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		e := j + 1
		if e < len(s) && (s[e] == '+' || s[e] == '-') {
			e++
		}
		if e < len(s) && isDigit(s[e]) {
			for e < len(s) && isDigit(s[e]) {
				e++
			}
			j = e
		}
	}
	f, err := strconv.ParseFloat(s[:j], 64)
	if err != nil && !isRangeErr(err) {
		return 0, 0
	}
	return f, j
}

func signed(f float64, neg bool) float64 {
	if neg {
		return -f
	}
	return f
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func isHex(b byte) bool {
	return isDigit(b) || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F')
}

// isSpace is C's isspace in the C locale.
func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}
