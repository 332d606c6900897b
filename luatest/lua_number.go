package luatest

import (
	"math"
	"strconv"
	"strings"

	"github.com/luagen/luagen/internal/lua51"
	"github.com/luagen/luagen/luatest/resp"
	lua "github.com/yuin/gopher-lua"
)

// Number handling of Lua 5.1 as embedded in Redis, where gopher-lua
// differs: tostring prints "%.14g" (LUAI_NUMFFORMAT) and tonumber follows
// strtod (luaO_str2d), so "1e2", " 12 " and "0x10" are numbers.

// numberToString is Lua 5.1's lua_Number → string conversion, "%.14g".
func numberToString(f float64) string { return resp.FormatG(f, 14) }

// appendNumber appends numberToString(f) to b; an integer below 1e14 in
// magnitude, which "%.14g" prints in full, without a string in between.
func appendNumber(b []byte, f float64) []byte {
	if f == math.Trunc(f) && math.Abs(f) < 1e14 && (f != 0 || !math.Signbit(f)) {
		return strconv.AppendInt(b, int64(f), 10)
	}
	return append(b, numberToString(f)...)
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func isHex(b byte) bool {
	return isDigit(b) || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F')
}

// luaToNumber replaces tonumber with Lua 5.1's luaB_tonumber.
func luaToNumber(L *lua.LState) int {
	base := L.OptInt(2, 10)
	if base == 10 {
		switch v := L.CheckAny(1).(type) {
		case lua.LNumber:
			L.Push(v)
			return 1
		case lua.LString:
			if f, ok := lua51.Str2d(string(v)); ok {
				L.Push(lua.LNumber(f))
				return 1
			}
		}
		L.Push(lua.LNil)
		return 1
	}
	s := L.CheckString(1)
	if base < 2 || base > 36 {
		L.ArgError(2, "base out of range")
	}
	// strtoul: leading spaces, optional sign, optional 0x for base 16.
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if base == 16 && strings.HasPrefix(strings.ToLower(s[i:]), "0x") && i+2 < len(s) && isHex(s[i+2]) {
		i += 2
	}
	start := i
	var n uint64
	for i < len(s) {
		d := digitVal(s[i])
		if d < 0 || d >= base {
			break
		}
		n = n*uint64(base) + uint64(d)
		i++
	}
	if i == start {
		L.Push(lua.LNil)
		return 1
	}
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i != len(s) {
		L.Push(lua.LNil)
		return 1
	}
	if neg {
		n = -n
	}
	L.Push(lua.LNumber(float64(n)))
	return 1
}

func digitVal(b byte) int {
	switch {
	case isDigit(b):
		return int(b - '0')
	case b >= 'a' && b <= 'z':
		return int(b-'a') + 10
	case b >= 'A' && b <= 'Z':
		return int(b-'A') + 10
	}
	return -1
}

// luaToString replaces tostring so numbers print with "%.14g".
func luaToString(orig lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		if n, ok := L.CheckAny(1).(lua.LNumber); ok {
			L.Push(lua.LString(numberToString(float64(n))))
			return 1
		}
		return orig(L)
	}
}

// rand48 is the PRNG Redis gives Lua's math.random (rand.c, a copy of
// lrand48): x = (0x5DEECE66D·x + 0xB) mod 2^48, output x >> 17. Redis 7.0
// never reseeds it between scripts: the state starts at lrand48's default
// and moves on with every call until math.randomseed(n) sets it to
// (n << 16) | 0x330E.
type rand48 struct{ x uint64 }

const rand48Default = 0x1234ABCD330E

func (r *rand48) next() int32 {
	r.x = (0x5DEECE66D*r.x + 0xB) & (1<<48 - 1)
	return int32(r.x >> 17)
}

func (r *rand48) seed(n int32) { r.x = uint64(uint32(n))<<16 | 0x330E }

// redisLrand48Max is REDIS_LRAND48_MAX (INT32_MAX).
const redisLrand48Max = math.MaxInt32
